using System.Net.Http.Headers;
using System.Text.Json;
using System.Threading.Channels;
using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Service.Peers;

/// <summary>
/// Tells one peer of the drive's changes: changes are gathered for <see cref="PeerLinkOptions.BatchWindow"/>, then POSTed
/// as one signed notice. A peer that does not answer is tried again with backoff a bounded number of times, then left to
/// catch up from the bucket; its own queue, so a peer that is down never holds another, nor any user's write.
/// </summary>
internal sealed class PeerSender : IAsyncDisposable
{
    private readonly Uri _target;
    private readonly PeerLinkOptions _options;
    private readonly byte[] _key;
    private readonly HttpClient _http;
    private readonly IClock _clock;
    private readonly Action<DriveEventRequest> _record;
    private readonly ILogger _logger;
    private readonly Channel<BucketChangeMade> _queue;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;
    private bool _down;
    private long _dropped;

    public PeerSender(string peer, PeerLinkOptions options, byte[] key, HttpClient http, IClock clock, Action<DriveEventRequest> record, ILogger logger)
    {
        Peer = peer;
        _target = new Uri(peer.TrimEnd('/') + PeerSignature.Route);
        _options = options;
        _key = key;
        _http = http;
        _clock = clock;
        _record = record;
        _logger = logger;
        _queue = Channel.CreateBounded<BucketChangeMade>(new BoundedChannelOptions(options.QueueCapacity)
        {
            SingleReader = true,
            FullMode = BoundedChannelFullMode.DropWrite,
        });
        _loop = Task.Run(() => RunAsync(_stop.Token));
    }

    public string Peer { get; }

    /// <summary>Notices sent and answered (for tests and the log).</summary>
    public long Delivered { get; private set; }

    /// <summary>Never waits: a full queue drops the change (the peer sees it at its next listing after updateWait, or its next start).</summary>
    public void Tell(BucketChangeMade change)
    {
        if (!_queue.Writer.TryWrite(change) && Interlocked.Increment(ref _dropped) == 1)
        {
            _logger.LogWarning("{Drive}: the notices for peer {Peer} are queued beyond {Capacity}; later ones are dropped until it catches up", _options.DriveName, Peer, _options.QueueCapacity);
        }
    }

    private async Task RunAsync(CancellationToken cancellationToken)
    {
        var batch = new List<BucketChangeMade>();
        try
        {
            while (await _queue.Reader.WaitToReadAsync(cancellationToken))
            {
                // A short gather: a copy of many files goes as a few notices, not one per file.
                await Task.Delay(_options.BatchWindow, cancellationToken);
                batch.Clear();
                while (batch.Count < _options.MaxChangesPerNotice && _queue.Reader.TryRead(out var change))
                {
                    batch.Add(change);
                }
                await SendAsync(batch, cancellationToken);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
    }

    private async Task SendAsync(List<BucketChangeMade> batch, CancellationToken cancellationToken)
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(new PeerNotice
        {
            Bucket = _options.Bucket,
            Prefix = _options.Prefix,
            From = _options.DriveName,
            Changes = [.. batch.Select(c => new PeerNoticeChange { Kind = c.Kind.ToString().ToLowerInvariant(), Key = c.Key, FromKey = c.FromKey })],
        }, GeoDriveClient.JsonOptions);
        var delay = _options.FirstRetryDelay;
        for (var attempt = 1; ; attempt++)
        {
            var failure = await TrySendAsync(body, cancellationToken);
            if (failure is null)
            {
                Delivered++;
                if (_down)
                {
                    _down = false;
                    _record(new DriveEventRequest(Core.Model.DriveEventKind.Sync, $"Peer {Peer} answers again; it is told of changes as they are made.", null));
                }
                return;
            }
            if (failure.Refused)
            {
                // It answered and refused (wrong key, other bucket): trying again would be refused the same way.
                _record(new DriveEventRequest(Core.Model.DriveEventKind.Error,
                    $"Peer {Peer} refused a notice of {batch.Count} change(s): {failure.Message} It sees them at its next listing after updateWait. Check that both sites' drives name the same bucket and prefix and hold the same peer key (Set-CloudDrive -PeerKey).",
                    failure.ErrorId ?? ErrorIds.PeerSignatureInvalid));
                return;
            }
            if (!_down)
            {
                _down = true;
                _record(new DriveEventRequest(Core.Model.DriveEventKind.Error,
                    $"Peer {Peer} did not answer ({failure.Message}); tried again up to {_options.MaxAttempts} times. A peer that stays down catches up from the bucket when its drive starts.",
                    ErrorIds.PeerUnreachable));
            }
            if (attempt >= _options.MaxAttempts)
            {
                _logger.LogWarning("{Drive}: peer {Peer} not told of {Count} change(s) after {Attempts} tries; it catches up from the bucket", _options.DriveName, Peer, batch.Count, attempt);
                return;
            }
            await Task.Delay(delay, cancellationToken);
            delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, _options.MaxRetryDelay.Ticks));
        }
    }

    private sealed record Failure(string Message, bool Refused, string? ErrorId);

    private async Task<Failure?> TrySendAsync(byte[] body, CancellationToken cancellationToken)
    {
        var timestamp = PeerSignature.Timestamp(_clock.UtcNow);
        var nonce = PeerSignature.NewNonce();
        using var request = new HttpRequestMessage(HttpMethod.Post, _target) { Content = new ByteArrayContent(body) };
        request.Content.Headers.ContentType = new MediaTypeHeaderValue("application/json");
        request.Headers.Add(PeerSignature.TimestampHeader, timestamp);
        request.Headers.Add(PeerSignature.NonceHeader, nonce);
        request.Headers.Add(PeerSignature.SignatureHeader, PeerSignature.Sign(_key, timestamp, nonce, body));
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(_options.RequestTimeout);
        try
        {
            using var response = await _http.SendAsync(request, timeout.Token);
            if (response.IsSuccessStatusCode)
            {
                return null;
            }
            var error = await ReadErrorAsync(response, timeout.Token);
            // 503: the peer is busy or its drive is not running; anything else in 4xx will not change by trying again.
            var refused = (int)response.StatusCode is >= 400 and < 500;
            return new Failure($"{(int)response.StatusCode}: {error?.Message ?? response.ReasonPhrase}", refused, error?.ErrorId);
        }
        catch (Exception ex) when (ex is HttpRequestException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            return new Failure(ex is OperationCanceledException ? $"no answer within {_options.RequestTimeout.TotalSeconds:0} s" : ex.Message, false, null);
        }
    }

    private static async Task<ApiError?> ReadErrorAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        try
        {
            return await response.Content.ReadFromJsonAsync<ApiError>(GeoDriveClient.JsonOptions, cancellationToken);
        }
        catch (Exception ex) when (ex is JsonException or NotSupportedException or HttpRequestException)
        {
            return null;
        }
    }

    public async ValueTask DisposeAsync()
    {
        _queue.Writer.TryComplete();
        await _stop.CancelAsync();
        await _loop;
        _stop.Dispose();
    }
}

/// <summary>An event the peer link puts in the drive's log.</summary>
internal sealed record DriveEventRequest(Core.Model.DriveEventKind Kind, string Message, string? ErrorId);
