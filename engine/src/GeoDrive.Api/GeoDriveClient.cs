using System.Net;
using System.Net.Http.Json;
using System.IO.Pipes;
using System.Net.Sockets;
using System.Runtime.Versioning;
using System.Security.Principal;
using System.Text.Json;
using GeoDrive.Core.Errors;

namespace GeoDrive.Api;

/// <summary>
/// Talks to the GeoDrive service's control API over its Unix domain socket (Linux) or named pipe (Windows). Every failure becomes a
/// <see cref="GeoDriveException"/> with the service's error id, or ServiceNotRunning when nothing answers.
/// </summary>
public sealed partial class GeoDriveClient : IDisposable
{
    public static readonly JsonSerializerOptions JsonOptions = new(JsonSerializerDefaults.Web);

    private readonly HttpClient _http;

    /// <summary>How long a client waits for a free instance of the service's pipe before it says "not running".</summary>
    private static readonly TimeSpan PipeConnectTimeout = TimeSpan.FromSeconds(2);

    public GeoDriveClient(string? socketPath = null, TimeSpan? timeout = null)
    {
        SocketPath = socketPath ?? ApiRoutes.DefaultSocketPath;
        Endpoint = ControlEndpoint.Parse(SocketPath);
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = (_, cancellationToken) => Endpoint.IsPipe && OperatingSystem.IsWindows()
                ? ConnectPipeAsync(cancellationToken)
                : ConnectSocketAsync(cancellationToken),
        };
        _http = new HttpClient(handler)
        {
            BaseAddress = new Uri("http://geodrive"),
            Timeout = timeout ?? TimeSpan.FromMinutes(30),
        };
    }

    /// <summary>The service's address: a socket path, or \\.\pipe\NAME on Windows.</summary>
    public string SocketPath { get; }

    public ControlEndpoint Endpoint { get; }

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

    /// <summary>Every version and delete marker of the file's object, newest first (Get-CloudFileVersion).</summary>
    public Task<CloudFileVersionInfo[]> GetFileVersionsAsync(string drive, string path, CancellationToken cancellationToken = default) =>
        SendAsync<CloudFileVersionInfo[]>(HttpMethod.Get, ApiRoutes.FileVersions(drive, path), null, cancellationToken);

    /// <summary>Makes a version current again, as a new version (Restore-CloudFile); answers the file as the drive now shows it.</summary>
    public Task<CloudFileInfo> RestoreFileAsync(string drive, RestoreFileRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<CloudFileInfo>(HttpMethod.Post, ApiRoutes.Restore(drive), request, cancellationToken);

    /// <summary>Sync-CloudDrive: answers once the whole tree is synced.</summary>
    public Task<DriveSyncInfo> SyncDriveAsync(string drive, SyncDriveRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<DriveSyncInfo>(HttpMethod.Post, ApiRoutes.Sync(drive), request, cancellationToken);

    /// <summary>The drive's Sync-CloudDrive under way, else its last one since the service started; null when none.</summary>
    public Task<DriveSyncInfo?> GetDriveSyncAsync(string drive, CancellationToken cancellationToken = default) =>
        SendAsync<DriveSyncInfo?>(HttpMethod.Get, ApiRoutes.Sync(drive), null, cancellationToken);

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
        catch (HttpRequestException ex) when (ex.InnerException is GeoDriveException refused)
        {
            throw refused;
        }
        catch (HttpRequestException ex) when (ex.InnerException is SocketException { SocketErrorCode: SocketError.AccessDenied } or UnauthorizedAccessException)
        {
            throw new GeoDriveException(ErrorIds.ServiceAccessDenied, ErrorKind.PermissionDenied,
                $"Access to the GeoDrive service at '{SocketPath}' was denied.",
                "Run PowerShell as root (Linux) or as an Administrator (Windows).", ex);
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

    private async ValueTask<Stream> ConnectSocketAsync(CancellationToken cancellationToken)
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
    }

    /// <summary>
    /// The service's named pipe. Identification only, so a server is never handed this user's token to
    /// act with; and the pipe's owner must be SYSTEM, Administrators or this user, so a pipe created by
    /// someone else before the service started is refused before a request (with a secret key) is sent.
    /// </summary>
    [SupportedOSPlatform("windows")]
    private async ValueTask<Stream> ConnectPipeAsync(CancellationToken cancellationToken)
    {
        var pipe = new NamedPipeClientStream(".", Endpoint.Name, PipeDirection.InOut, PipeOptions.Asynchronous, TokenImpersonationLevel.Identification);
        try
        {
            try
            {
                await pipe.ConnectAsync(PipeConnectTimeout, cancellationToken);
            }
            catch (TimeoutException ex)
            {
                throw new IOException($"No instance of the pipe '{SocketPath}' answered within {PipeConnectTimeout.TotalSeconds:0} s.", ex);
            }
            var owner = pipe.GetAccessControl().GetOwner(typeof(SecurityIdentifier))?.Value;
            using var me = WindowsIdentity.GetCurrent();
            if (!ControlPipeAccess.IsTrustedOwner(owner, me.User?.Value))
            {
                throw new GeoDriveException(ErrorIds.ServiceAccessDenied, ErrorKind.PermissionDenied,
                    $"The pipe '{SocketPath}' belongs to '{owner}', not to SYSTEM, Administrators or you: another program may be posing as the GeoDrive service. Nothing was sent.",
                    "Find and stop the program that created the pipe, then (re)start the GeoDrive service (Restart-Service GeoDrive).");
            }
            return pipe;
        }
        catch
        {
            await pipe.DisposeAsync();
            throw;
        }
    }

    private GeoDriveException NotRunning(Exception inner) => new(
        ErrorIds.ServiceNotRunning,
        ErrorKind.ResourceUnavailable,
        $"The GeoDrive service is not running (nothing answers on '{SocketPath}').",
        "Start it with 'Start-GeoDriveService' (or 'systemctl start geodrive', or on Windows 'Start-Service GeoDrive'), then try again.",
        inner);
}
