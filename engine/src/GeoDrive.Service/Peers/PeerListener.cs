using System.Text.Json;
using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Service.Peers;

/// <summary>
/// Where a drive hears its peers: a small HTTP listener of its own on the address the administrator gave
/// (New-CloudDrive -PeerListen), taking only signed notices (POST /v1/peer/notices). A notice is refused, with an
/// error id and an event on the drive, when its signature does not hold under the drive's peer key, when it was sent
/// before (its time out of the window, or its nonce seen), or when it names another bucket or prefix. An accepted
/// notice is answered at once (202) and its keys are synced in the background.
/// </summary>
internal sealed class PeerListener : IAsyncDisposable
{
    private readonly WebApplication _app;

    private PeerListener(WebApplication app) => _app = app;

    public static async Task<PeerListener> StartAsync(PeerLinkOptions options, byte[] key, PeerFollower follower, IClock clock,
        Action<DriveEventRequest> record, ILogger logger, CancellationToken cancellationToken)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Listen(options.Listen!);
            k.Limits.MaxRequestBodySize = PeerLinkOptions.MaxNoticeBytes;
            k.AddServerHeader = false;
        });
        var app = builder.Build();
        var guard = new ReplayGuard(clock);
        var refusals = new RefusalEvents(clock, record);
        app.MapPost(PeerSignature.Route, async context =>
        {
            var request = context.Request;
            var from = context.Connection.RemoteIpAddress?.ToString() ?? "?";
            byte[] body;
            try
            {
                using var buffer = new MemoryStream();
                await request.Body.CopyToAsync(buffer, context.RequestAborted);
                body = buffer.ToArray();
            }
            catch (BadHttpRequestException)
            {
                await RefuseAsync(context, 413, ErrorIds.InvalidRequest, $"The notice is larger than {PeerLinkOptions.MaxNoticeBytes / (1024 * 1024)} MiB.", "Send fewer changes per notice.");
                return;
            }
            var timestamp = request.Headers[PeerSignature.TimestampHeader].ToString();
            var nonce = request.Headers[PeerSignature.NonceHeader].ToString();
            var signature = request.Headers[PeerSignature.SignatureHeader].ToString();
            if (timestamp.Length == 0 || nonce.Length is 0 or > 128 || signature.Length == 0
                || !PeerSignature.Verify(key, timestamp, nonce, body, signature))
            {
                var message = $"A notice from {from} was refused: its signature does not hold under drive '{options.DriveName}''s peer key; nothing was changed.";
                const string remedy = "Give every site of the drive the same peer key (Set-CloudDrive -PeerKey); if no site of yours sent it, find who reaches this address.";
                refusals.Refused(ErrorIds.PeerSignatureInvalid, message, remedy);
                logger.LogWarning("{Drive}: {Message} ({ErrorId})", options.DriveName, message, ErrorIds.PeerSignatureInvalid);
                await RefuseAsync(context, 401, ErrorIds.PeerSignatureInvalid, message, remedy);
                return;
            }
            if (guard.Check(timestamp, nonce) is { } why)
            {
                var message = $"A notice from {from} was refused: {why}; nothing was changed.";
                const string remedy = "Keep the sites' clocks in step (NTP); a notice sent again is refused by design.";
                refusals.Refused(ErrorIds.PeerNoticeReplayed, message, remedy);
                logger.LogWarning("{Drive}: {Message} ({ErrorId})", options.DriveName, message, ErrorIds.PeerNoticeReplayed);
                await RefuseAsync(context, 401, ErrorIds.PeerNoticeReplayed, message, remedy);
                return;
            }
            PeerNotice? notice;
            try
            {
                notice = JsonSerializer.Deserialize<PeerNotice>(body, GeoDriveClient.JsonOptions);
            }
            catch (JsonException ex)
            {
                await RefuseAsync(context, 400, ErrorIds.InvalidRequest, $"The notice was not understood: {ex.Message}", "Send notices from a GeoDrive service of the same version.");
                return;
            }
            if (notice is null || !string.Equals(notice.Bucket, options.Bucket, StringComparison.Ordinal) || !string.Equals(notice.Prefix, options.Prefix, StringComparison.Ordinal))
            {
                var message = $"A notice from drive '{notice?.From}' names bucket '{notice?.Bucket}' prefix '{notice?.Prefix}'; drive '{options.DriveName}' is on bucket '{options.Bucket}' prefix '{options.Prefix}'. Nothing was changed.";
                const string remedy = "Point the other site's -Peer at the listener of the drive on the same bucket and prefix.";
                refusals.Refused(ErrorIds.InvalidRequest, message, remedy);
                await RefuseAsync(context, 400, ErrorIds.InvalidRequest, message, remedy);
                return;
            }
            var keys = notice.Changes.SelectMany(c => c.FromKey is null ? new[] { c.Key } : [c.Key, c.FromKey]).Where(k => k is { Length: > 0 and <= 1024 });
            if (!follower.Accept(keys))
            {
                await RefuseAsync(context, 503, ErrorIds.PeerUnreachable, $"Drive '{options.DriveName}' has more notices queued than it takes at once.", "Nothing: the sender tries again.");
                return;
            }
            context.Response.StatusCode = 202;
        });
        try
        {
            await app.StartAsync(cancellationToken);
        }
        catch (Exception ex) when (ex is IOException or System.Net.Sockets.SocketException or InvalidOperationException)
        {
            await app.DisposeAsync();
            throw new GeoDriveException(ErrorIds.PeerListenFailed, ErrorKind.ResourceUnavailable,
                $"Drive '{options.DriveName}' could not listen for its peers on {options.Listen}: {ex.Message}",
                "Give -PeerListen an address of this host and a port nothing else uses (e.g. 0.0.0.0:7701, or 127.0.0.1:7701 for this host only).");
        }
        return new PeerListener(app);
    }

    private static async Task RefuseAsync(HttpContext context, int status, string errorId, string message, string remedy)
    {
        context.Response.StatusCode = status;
        await context.Response.WriteAsJsonAsync(new ApiError { ErrorId = errorId, Kind = nameof(ErrorKind.PermissionDenied), Message = message, Remedy = remedy }, GeoDriveClient.JsonOptions);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }

    /// <summary>A refusal is an event on the drive; a flood of them is one event per 10 s per kind, with the count.</summary>
    private sealed class RefusalEvents(IClock clock, Action<DriveEventRequest> record)
    {
        private readonly Dictionary<string, (DateTimeOffset Last, int Since)> _last = new(StringComparer.Ordinal);
        private readonly Lock _gate = new();

        public void Refused(string errorId, string message, string remedy)
        {
            var now = clock.UtcNow;
            int since;
            lock (_gate)
            {
                if (_last.TryGetValue(errorId, out var last) && now - last.Last < TimeSpan.FromSeconds(10))
                {
                    _last[errorId] = (last.Last, last.Since + 1);
                    return;
                }
                since = _last.TryGetValue(errorId, out var previous) ? previous.Since : 0;
                _last[errorId] = (now, 0);
            }
            record(new DriveEventRequest(DriveEventKind.Error, message + " " + remedy + (since > 0 ? $" ({since} more refused like it before this one.)" : ""), errorId));
        }
    }
}
