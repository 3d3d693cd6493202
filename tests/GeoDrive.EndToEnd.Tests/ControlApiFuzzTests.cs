using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Xunit.Abstractions;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The control API under bad requests, against the real service: a seeded stream of malformed JSON, wrong
/// types, hostile path parameters (.., NUL, 64 KB of text), unknown routes and wrong methods; a 100 MB body;
/// 200 connections at once. Each answer is a 4xx (with an error id whenever the service itself answers), the
/// service stays up, and its memory stays bounded. The seed is printed; GEODRIVE_FUZZ_SEED replays it.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class ControlApiFuzzTests(ITestOutputHelper output) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();
    private HttpClient _http = null!;

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = async (_, ct) =>
            {
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                await socket.ConnectAsync(new UnixDomainSocketEndPoint(_service.SocketPath), ct);
                return new NetworkStream(socket, ownsSocket: true);
            },
            MaxConnectionsPerServer = 256,
        };
        _http = new HttpClient(handler) { BaseAddress = new Uri("http://geodrive"), Timeout = TimeSpan.FromSeconds(30) };
    }

    public async Task DisposeAsync()
    {
        _http.Dispose();
        await _service.DisposeAsync();
    }

    private static readonly string[] Methods = ["GET", "POST", "PATCH", "DELETE", "PUT"];

    private static readonly string[] Routes =
    [
        "/v1/drives", "/v1/drives/{p}", "/v1/drives/{p}/status", "/v1/drives/{p}/files?path={p}", "/v1/drives/{p}/files/stub",
        "/v1/drives/{p}/files/recall", "/v1/drives/{p}/events/query", "/v1/drives/{p}/policy/decision?path={p}",
        "/v1/drives/{p}/recall-jobs", "/v1/drives/{p}/recall-jobs/{p}", "/v1/drives/{p}/mount", "/v1/nothing/{p}", "/{p}",
    ];

    private static string Parameter(Random random) => random.Next(8) switch
    {
        0 => "..",
        1 => "a%00b",
        2 => new string('x', 64 * 1024),
        3 => "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        4 => Uri.EscapeDataString("ünï\u0001cødé"),
        5 => "",
        6 => new string('n', random.Next(1, 300)),
        _ => Uri.EscapeDataString(Encoding.UTF8.GetString(RandomBytes(random, 20))),
    };

    private static byte[] RandomBytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    private static string? Body(Random random) => random.Next(9) switch
    {
        0 => null,
        1 => "{",
        2 => "null",
        3 => "[]",
        4 => "{\"paths\": 42, \"literal\": \"yes\"}",
        5 => "{\"name\": {\"nested\": [1, 2, {\"x\": null}]}, \"cachePath\": 7}",
        6 => new string('[', 5000),
        7 => "{\"name\":\"" + new string('z', 70_000) + "\"}",
        _ => Encoding.Latin1.GetString(RandomBytes(random, random.Next(1, 2000))),
    };

    private async Task<(HttpStatusCode Status, string Body, string? MediaType)> SendAsync(string method, string path, string? body)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), path);
        if (body is not null)
        {
            request.Content = new StringContent(body, Encoding.UTF8, "application/json");
        }
        using var response = await _http.SendAsync(request);
        return (response.StatusCode, await response.Content.ReadAsStringAsync(), response.Content.Headers.ContentType?.MediaType);
    }

    private static void AssertRefusedWithAnId(string what, HttpStatusCode status, string body, string? mediaType)
    {
        Assert.True((int)status is >= 400 and < 500, $"{what}: {(int)status} {body[..Math.Min(body.Length, 300)]}");
        // Kestrel refuses a request it will not parse (a NUL in the target: 400; a request line or headers too
        // long: 414, 431) before the service sees it, with an empty body: nothing of the service's ran.
        if ((int)status is 400 or 414 or 431 && body.Length == 0)
        {
            return;
        }
        Assert.True(mediaType == "application/json", $"{what}: {(int)status} answered without an error id ({mediaType}): {body[..Math.Min(body.Length, 300)]}");
        using var json = JsonDocument.Parse(body);
        Assert.True(json.RootElement.TryGetProperty("errorId", out var id) && id.GetString() is { Length: > 0 }, $"{what}: no errorId in {body}");
    }

    private long ServiceRssKiB() =>
        File.ReadLines($"/proc/{_service.ProcessId}/status").Where(l => l.StartsWith("VmRSS:", StringComparison.Ordinal))
            .Select(l => long.Parse(l.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], System.Globalization.CultureInfo.InvariantCulture)).Single();

    [Fact]
    public async Task Seeded_bad_requests_each_get_a_4xx_with_an_error_id_and_the_service_stays_up_with_bounded_memory()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("GEODRIVE_FUZZ_SEED"), out var s) ? s : Random.Shared.Next();
        output.WriteLine($"seed {seed} (replay: GEODRIVE_FUZZ_SEED={seed})");
        var random = new Random(seed);
        await SendAsync("GET", "/v1/drives", null);
        var rssBefore = ServiceRssKiB();
        var closedEarly = 0;

        for (var i = 0; i < 300; i++)
        {
            var method = Methods[random.Next(Methods.Length)];
            var path = Routes[random.Next(Routes.Length)];
            while (path.Contains("{p}", StringComparison.Ordinal))
            {
                var at = path.IndexOf("{p}", StringComparison.Ordinal);
                path = path[..at] + Parameter(random) + path[(at + 3)..];
            }
            var body = Body(random);
            (HttpStatusCode Status, string Body, string? MediaType) answer;
            try
            {
                answer = await SendAsync(method, path, body);
            }
            catch (HttpRequestException ex) when (ex.InnerException is IOException)
            {
                // Kestrel answered a request it would not read (a request line too long) and closed the
                // connection while the body was still being sent: refused, and the next request must work.
                closedEarly++;
                continue;
            }
            if ((int)answer.Status < 300 && method == "GET")
            {
                // A read that happens to name something real (GET /v1/drives/ lists the drives) may succeed.
                continue;
            }
            AssertRefusedWithAnId($"seed {seed}, request {i}: {method} {path[..Math.Min(path.Length, 120)]}", answer.Status, answer.Body, answer.MediaType);
        }
        output.WriteLine($"{closedEarly} requests were refused by Kestrel before their body was sent");

        Assert.Equal(HttpStatusCode.OK, (await SendAsync("GET", "/v1/service", null)).Status);
        var rssAfter = ServiceRssKiB();
        output.WriteLine($"service RSS {rssBefore / 1024} MiB before, {rssAfter / 1024} MiB after");
        Assert.True(rssAfter < rssBefore + 200 * 1024, $"the service grew from {rssBefore / 1024} to {rssAfter / 1024} MiB");
    }

    [Fact]
    public async Task A_100_MB_body_is_refused_without_being_read_and_the_service_stays_up()
    {
        var rssBefore = ServiceRssKiB();
        using var request = new HttpRequestMessage(HttpMethod.Post, "/v1/drives")
        {
            Content = new ByteArrayContent(new byte[100 * 1024 * 1024]) { Headers = { ContentType = new("application/json") } },
        };
        HttpStatusCode status;
        try
        {
            using var response = await _http.SendAsync(request);
            status = response.StatusCode;
            AssertRefusedWithAnId("100 MB body", status, await response.Content.ReadAsStringAsync(), response.Content.Headers.ContentType?.MediaType);
        }
        catch (HttpRequestException)
        {
            // The service may answer 413 and close before the client has sent everything: refused, not read.
        }
        Assert.Equal(HttpStatusCode.OK, (await SendAsync("GET", "/v1/service", null)).Status);
        Assert.True(ServiceRssKiB() < rssBefore + 50 * 1024, "the body was read into memory");
    }

    [Fact]
    public async Task Two_hundred_connections_at_once_are_all_answered()
    {
        var answers = await Task.WhenAll(Enumerable.Range(0, 200).Select(_ => SendAsync("GET", "/v1/drives", null)));
        Assert.All(answers, a => Assert.Equal(HttpStatusCode.OK, a.Status));
        Assert.Equal(HttpStatusCode.OK, (await SendAsync("GET", "/v1/service", null)).Status);
    }
}
