using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text.RegularExpressions;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The Prometheus scrape endpoint of the real service (docs/metrics.md): scraped while a workload runs through the FUSE
/// mount, its counters must equal what was moved; off unless asked for; loopback unless remote is allowed.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed partial class MetricsTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();
    private readonly HttpClient _http = new() { Timeout = TimeSpan.FromSeconds(10) };
    private PowerShellSession? _ps;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        _ps?.Dispose();
        _http.Dispose();
        await _service.DisposeAsync();
    }

    [Fact]
    public async Task Scraped_counters_equal_the_files_and_bytes_uploaded_and_recalled_through_the_mount()
    {
        var port = FreeLoopbackPort();
        _service.ExtraArguments = ["--metrics-listen", $"127.0.0.1:{port}"];
        await _service.StartAsync();
        _ps = new PowerShellSession(_service.SocketPath);
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s").TrimEnd() + "\n  throttle: { download: 1MB/s }\n");
        d.CreateOn(_service, d.Bucket);
        var drive = new Dictionary<string, string> { ["drive"] = d.Name };

        var sizes = new[] { 1_000, 20_000, 150_000, 1_500_000, 64 * 1024 + 1 };
        for (var i = 0; i < sizes.Length; i++)
        {
            await File.WriteAllBytesAsync(d.Mounted($"f{i}.bin"), DriveRig.RandomBytes(sizes[i], seed: i));
        }
        // One file whose attribute cannot fit in S3's 2 KB of metadata: uploaded all the same, with a PropertiesTrimmed event.
        var big = d.Mounted("big-attribute.txt");
        await using (var open = new FileStream(big, FileMode.CreateNew, FileAccess.Write))
        {
            await open.WriteAsync("kept local"u8.ToArray());
            Command.Output("setfattr", "-n", "user.note", "-v", new string('x', 3000), big);
        }
        var uploads = sizes.Length + 1;
        var uploadedBytes = sizes.Sum() + "kept local".Length;

        // Scraped during the workload: an answer every time, never more than was written.
        var during = await ScrapeAsync(port);
        Assert.InRange(Value(during, "geodrive_upload_files_total", drive) ?? 0, 0, uploads);

        await DriveScenario.EventuallyAsync(() => CachedCount(d) == uploads, $"all {uploads} files Cached");
        var afterUpload = await EventuallyScrapedAsync(port, s => Value(s, "geodrive_upload_files_total", drive) == uploads, "uploads counted");
        Assert.Equal(uploadedBytes, Value(afterUpload, "geodrive_upload_bytes_total", drive));
        Assert.Equal(uploads, Value(afterUpload, "geodrive_upload_duration_seconds_count", drive));
        Assert.Equal(uploads, Value(afterUpload, "geodrive_files", new() { ["drive"] = d.Name, ["state"] = "Cached" }));
        Assert.Equal(0, Value(afterUpload, "geodrive_files", new() { ["drive"] = d.Name, ["state"] = "Dirty" }));
        Assert.Equal(1, Value(afterUpload, "geodrive_errors_total", new() { ["drive"] = d.Name, ["error_id"] = "PropertiesTrimmed" }));
        Assert.Equal(1, Value(afterUpload, "geodrive_endpoint_up", new() { ["drive"] = d.Name, ["endpoint"] = s3.Endpoint.TrimEnd('/') }));

        // Three stubs, two of them read back through the mount (recalled under the 1 MB/s download throttle).
        foreach (var i in new[] { 2, 3, 4 })
        {
            _ps.Invoke("Invoke-ForceStub -Drive $name -Path $p -Confirm:$false", new Dictionary<string, object?> { ["name"] = d.Name, ["p"] = $"f{i}.bin" });
            Assert.Empty(_ps.LastErrors);
        }
        Assert.Equal(DriveRig.RandomBytes(sizes[2], seed: 2), await File.ReadAllBytesAsync(d.Mounted("f2.bin")));
        Assert.Equal(DriveRig.RandomBytes(sizes[3], seed: 3), await File.ReadAllBytesAsync(d.Mounted("f3.bin")));

        var after = await EventuallyScrapedAsync(port, s => Value(s, "geodrive_recall_files_total", drive) == 2, "recalls counted");
        Assert.Equal(sizes[2] + sizes[3], Value(after, "geodrive_recall_bytes_total", drive));
        Assert.Equal(2, Value(after, "geodrive_recall_duration_seconds_count", drive));
        Assert.Equal(uploads - 1, Value(after, "geodrive_files", new() { ["drive"] = d.Name, ["state"] = "Cached" }));
        Assert.Equal(1, Value(after, "geodrive_files", new() { ["drive"] = d.Name, ["state"] = "Stubbed" }));
        // 1.65 MB through a 1 MB/s limit: the bucket holds at most a second of it, however long a loaded machine took to reach
        // the recalls (450 KB could fit in what it gathered meanwhile, and no wait was told), so part of the 1.5 MB file waits;
        // together the waits never exceed the 1.65 s both files take at that rate.
        Assert.InRange(Value(after, "geodrive_throttle_wait_seconds_total", new() { ["drive"] = d.Name, ["direction"] = "download" }) ?? 0, 0.1, 1.7);
        // What was uploaded did not change by recalling.
        Assert.Equal(uploadedBytes, Value(after, "geodrive_upload_bytes_total", drive));
        // The same numbers as Get-CloudDriveStatus: one source.
        var status = _ps.Invoke("Get-CloudDriveStatus -Name $name", new Dictionary<string, object?> { ["name"] = d.Name }).Single();
        Assert.Equal((long)status.Properties["RecalledBytes"].Value, (long)Value(after, "geodrive_recall_bytes_total", drive)!.Value);

        // The Grafana dashboard queries only series the service exports (samples/grafana).
        var exported = after.Select(s => s.Name).ToHashSet(StringComparer.Ordinal);
        var queried = DashboardMetricNames();
        Assert.NotEmpty(queried);
        Assert.All(queried, name => Assert.Contains(name, exported));
    }

    [Fact]
    public async Task Without_metrics_listen_the_service_listens_on_no_TCP_port()
    {
        await _service.StartAsync();

        Assert.Empty(ListeningTcpSockets(_service.ProcessId));
    }

    [Fact]
    public async Task With_metrics_listen_the_service_listens_on_that_loopback_port_only_and_serves_nothing_else_there()
    {
        var port = FreeLoopbackPort();
        _service.ExtraArguments = ["--metrics-listen", port.ToString(CultureInfo.InvariantCulture)];
        await _service.StartAsync();

        Assert.Equal([new IPEndPoint(IPAddress.Loopback, port)], ListeningTcpSockets(_service.ProcessId));
        using var control = await _http.GetAsync(new Uri($"http://127.0.0.1:{port}/v1/service"));
        Assert.Equal(HttpStatusCode.NotFound, control.StatusCode);
    }

    [Fact]
    public void A_non_loopback_metrics_address_is_refused_at_start_without_metrics_allow_remote()
    {
        var (exitCode, _, error) = Command.Run("dotnet", ServiceProcess.ServiceDll, "--socket", Path.Combine(_service.Root, "refused.sock"),
            "--home", _service.HomePath, "--metrics-listen", $"0.0.0.0:{FreeLoopbackPort()}");

        Assert.Equal(2, exitCode);
        Assert.StartsWith("error MetricsListenRefused:", error, StringComparison.Ordinal);
        Assert.Contains("--metrics-allow-remote", error, StringComparison.Ordinal);
        Assert.False(File.Exists(Path.Combine(_service.Root, "refused.sock")));
    }

    private async Task<IReadOnlyList<PrometheusSample>> ScrapeAsync(int port)
    {
        using var response = await _http.GetAsync(new Uri($"http://127.0.0.1:{port}/metrics"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return PrometheusText.Parse(await response.Content.ReadAsStringAsync());
    }

    /// <summary>Scrapes until <paramref name="reached"/> holds (the exporter may answer from a scrape a moment old).</summary>
    private async Task<IReadOnlyList<PrometheusSample>> EventuallyScrapedAsync(int port, Func<IReadOnlyList<PrometheusSample>, bool> reached, string what)
    {
        IReadOnlyList<PrometheusSample> samples = [];
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (!reached(samples = await ScrapeAsync(port)))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"not scraped within 30 s: {what}; last scrape:\n{string.Join("\n", samples.Where(s => s.Name.StartsWith("geodrive_", StringComparison.Ordinal)))}");
            }
            await Task.Delay(200);
        }
        return samples;
    }

    /// <summary>The one sample of <paramref name="name"/> whose labels include <paramref name="labels"/>; null when there is none.</summary>
    private static double? Value(IReadOnlyList<PrometheusSample> samples, string name, Dictionary<string, string> labels)
    {
        var matching = samples.Where(s => s.Name == name && labels.All(l => s.Labels.TryGetValue(l.Key, out var v) && v == l.Value)).ToList();
        Assert.True(matching.Count <= 1, $"{matching.Count} samples of {name} match");
        return matching.SingleOrDefault()?.Value;
    }

    private int CachedCount(DriveScenario d) =>
        (int)_ps!.Invoke("@(Get-CloudFile -Drive $name -Path '**' | Where-Object State -eq 'Cached').Count", new Dictionary<string, object?> { ["name"] = d.Name }).Single().BaseObject;

    /// <summary>Every series name the sample dashboard's queries use.</summary>
    internal static IReadOnlySet<string> DashboardMetricNames()
    {
        var json = File.ReadAllText(Path.Combine(RepoRoot.Path, "samples/grafana/geodrive-dashboard.json"));
        using var dashboard = System.Text.Json.JsonDocument.Parse(json);
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var expr in Expressions(dashboard.RootElement))
        {
            foreach (Match m in MetricName().Matches(expr))
            {
                names.Add(m.Value);
            }
        }
        return names;
    }

    private static IEnumerable<string> Expressions(System.Text.Json.JsonElement element)
    {
        switch (element.ValueKind)
        {
            case System.Text.Json.JsonValueKind.Object:
                foreach (var property in element.EnumerateObject())
                {
                    if (property.Name is "expr" or "query" && property.Value.ValueKind == System.Text.Json.JsonValueKind.String)
                    {
                        yield return property.Value.GetString()!;
                    }
                    else
                    {
                        foreach (var inner in Expressions(property.Value))
                        {
                            yield return inner;
                        }
                    }
                }
                break;
            case System.Text.Json.JsonValueKind.Array:
                foreach (var item in element.EnumerateArray())
                {
                    foreach (var inner in Expressions(item))
                    {
                        yield return inner;
                    }
                }
                break;
        }
    }

    [GeneratedRegex(@"\bgeodrive_[a-z0-9_]+")]
    private static partial Regex MetricName();

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    /// <summary>The TCP sockets the process listens on, from its descriptors and the kernel's socket tables.</summary>
    private static List<IPEndPoint> ListeningTcpSockets(int pid)
    {
        var inodes = new HashSet<string>(StringComparer.Ordinal);
        foreach (var fd in Directory.GetFiles($"/proc/{pid}/fd"))
        {
            if (new FileInfo(fd).LinkTarget is { } target && target.StartsWith("socket:[", StringComparison.Ordinal))
            {
                inodes.Add(target[8..^1]);
            }
        }
        var listening = new List<IPEndPoint>();
        foreach (var table in new[] { "/proc/net/tcp", "/proc/net/tcp6" })
        {
            foreach (var line in File.ReadLines(table).Skip(1))
            {
                var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                // st 0A is LISTEN; field 9 is the socket's inode.
                if (fields[3] == "0A" && inodes.Contains(fields[9]))
                {
                    listening.Add(ParseProcAddress(fields[1]));
                }
            }
        }
        return listening;
    }

    private static IPEndPoint ParseProcAddress(string field)
    {
        var (hex, port) = (field.Split(':')[0], int.Parse(field.Split(':')[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture));
        var bytes = Convert.FromHexString(hex);
        // The kernel prints each 32-bit word in host (little-endian) order.
        for (var word = 0; word < bytes.Length; word += 4)
        {
            Array.Reverse(bytes, word, 4);
        }
        return new IPEndPoint(new IPAddress(bytes), port);
    }
}
