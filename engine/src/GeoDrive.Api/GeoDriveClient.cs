using System.Net;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Text.Json;
using GeoDrive.Core.Errors;

namespace GeoDrive.Api;

/// <summary>
/// Talks to the GeoDrive service's control API over its Unix domain socket. Every failure becomes a
/// <see cref="GeoDriveException"/> with the service's error id, or ServiceNotRunning when nothing answers.
/// </summary>
public sealed partial class GeoDriveClient : IDisposable
{
    public static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web);

    private readonly HttpClient _http;

    public GeoDriveClient(string? socketPath = null, TimeSpan? timeout = null)
    {
        SocketPath = socketPath ?? ApiRoutes.DefaultSocketPath;
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = async (_, cancellationToken) =>
            {
                var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
                try
                {
                    await socket.ConnectAsync(new UnixDomainSocketEndPoint(SocketPath), cancellationToken);
                    return new NetworkStream(socket, ownsSocket: true);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
            },
        };
        _http = new HttpClient(handler)
        {
            BaseAddress = new Uri("http://geodrive"),
            Timeout = timeout ?? TimeSpan.FromMinutes(30),
        };
    }

    public string SocketPath { get; }

    public Task<ServiceInfo> GetServiceAsync(CancellationToken cancellationToken = default) =>
        SendAsync<ServiceInfo>(HttpMethod.Get, ApiRoutes.Service, null, cancellationToken);

    public Task<DriveInfo[]> GetDrivesAsync(CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo[]>(HttpMethod.Get, ApiRoutes.Drives, null, cancellationToken);

    public Task<DriveInfo> GetDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Get, ApiRoutes.Drive(name), null, cancellationToken);

    public Task<DriveInfo> NewDriveAsync(NewDriveRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Post, ApiRoutes.Drives, request, cancellationToken);

    public Task RemoveDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<JsonElement>(HttpMethod.Delete, ApiRoutes.Drive(name), null, cancellationToken);

    public Task<DriveInfo> MountDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Post, ApiRoutes.Mount(name), null, cancellationToken);

    public Task<DriveInfo> DismountDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Post, ApiRoutes.Dismount(name), null, cancellationToken);

    public Task<DriveInfo> SuspendDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Post, ApiRoutes.Drive(name) + "/suspend", null, cancellationToken);

    public Task<DriveInfo> ResumeDriveAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Post, ApiRoutes.Drive(name) + "/resume", null, cancellationToken);

    public Task<DriveStatusInfo> GetDriveStatusAsync(string name, CancellationToken cancellationToken = default) =>
        SendAsync<DriveStatusInfo>(HttpMethod.Get, ApiRoutes.Drive(name) + "/status", null, cancellationToken);

    public Task<CloudFileInfo[]> GetFilesAsync(string drive, string pattern, CancellationToken cancellationToken = default) =>
        SendAsync<CloudFileInfo[]>(HttpMethod.Get, ApiRoutes.Files(drive, pattern), null, cancellationToken);

    public Task<FileActionResult[]> StubAsync(string drive, FileActionRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<FileActionResult[]>(HttpMethod.Post, ApiRoutes.Stub(drive), request, cancellationToken);

    public Task<FileActionResult[]> UploadAsync(string drive, FileActionRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<FileActionResult[]>(HttpMethod.Post, ApiRoutes.Upload(drive), request, cancellationToken);

    public Task<FileActionResult[]> RecallAsync(string drive, FileActionRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<FileActionResult[]>(HttpMethod.Post, ApiRoutes.Recall(drive), request, cancellationToken);

    public Task<PolicyFileInfo[]> GetPolicyFilesAsync(string drive, CancellationToken cancellationToken = default) =>
        SendAsync<PolicyFileInfo[]>(HttpMethod.Get, ApiRoutes.Policy(drive), null, cancellationToken);

    public Task<PolicySettingInfo[]> GetEffectivePolicyAsync(string drive, CancellationToken cancellationToken = default) =>
        SendAsync<PolicySettingInfo[]>(HttpMethod.Get, ApiRoutes.EffectivePolicy(drive), null, cancellationToken);

    public Task<PolicyDecisionInfo> GetPolicyDecisionAsync(string drive, string path, string? process = null, CancellationToken cancellationToken = default) =>
        SendAsync<PolicyDecisionInfo>(HttpMethod.Get, ApiRoutes.PolicyDecision(drive, path, process), null, cancellationToken);

    public void Dispose() => _http.Dispose();

    private async Task<T> SendAsync<T>(HttpMethod method, string route, object? body, CancellationToken cancellationToken)
    {
        using var request = new HttpRequestMessage(method, route);
        if (body is not null)
        {
            request.Content = JsonContent.Create(body, body.GetType(), options: JsonOptions);
        }

        HttpResponseMessage response;
        try
        {
            response = await _http.SendAsync(request, cancellationToken);
        }
        catch (HttpRequestException ex) when (ex.InnerException is SocketException se)
        {
            throw se.SocketErrorCode == SocketError.AccessDenied
                ? new GeoDriveException(ErrorIds.ServiceAccessDenied, ErrorKind.PermissionDenied,
                    $"Access to the GeoDrive service socket '{SocketPath}' was denied.",
                    "Run PowerShell as root (Linux) or as an Administrator (Windows).", ex)
                : NotRunning(ex);
        }
        catch (HttpRequestException ex)
        {
            throw NotRunning(ex);
        }

        using (response)
        {
            if (response.IsSuccessStatusCode)
            {
                if (response.StatusCode == HttpStatusCode.NoContent)
                {
                    return default!;
                }
                return (await response.Content.ReadFromJsonAsync<T>(JsonOptions, cancellationToken))!;
            }

            ApiError? error = null;
            try
            {
                error = await response.Content.ReadFromJsonAsync<ApiError>(JsonOptions, cancellationToken);
            }
            catch (JsonException)
            {
            }
            if (error is null)
            {
                throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.NotSpecified,
                    $"The GeoDrive service answered {(int)response.StatusCode} {response.ReasonPhrase}.", "See the service log.");
            }
            var kind = Enum.TryParse<ErrorKind>(error.Kind, out var k) ? k : ErrorKind.NotSpecified;
            throw new GeoDriveException(error.ErrorId, kind, error.Message, error.Remedy);
        }
    }

    private GeoDriveException NotRunning(Exception inner) => new(
        ErrorIds.ServiceNotRunning,
        ErrorKind.ResourceUnavailable,
        $"The GeoDrive service is not running (nothing answers on '{SocketPath}').",
        "Start it with 'Start-GeoDriveService' (or 'systemctl start geodrive'), then try again.",
        inner);
}
