using System.Threading.Channels;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Service.Peers;

/// <summary>
/// Hands the keys peers told of to the drive's engine, one batch at a time: keys that arrive while a batch is being
/// synced are gathered into the next, so a burst of notices costs a few folder syncs, not one per notice.
/// </summary>
internal sealed class PeerFollower : IAsyncDisposable
{
    private readonly DriveEngine _engine;
    private readonly ILogger _logger;
    private readonly Channel<string> _keys;
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;

    public PeerFollower(DriveEngine engine, int capacity, ILogger logger)
    {
        _engine = engine;
        _logger = logger;
        _keys = Channel.CreateBounded<string>(new BoundedChannelOptions(capacity) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
        _loop = Task.Run(() => RunAsync(_stop.Token));
    }

    /// <summary>False when the queue has no room for them all (the notice is refused as busy; its sender tries again).</summary>
    public bool Accept(IEnumerable<string> keys)
    {
        foreach (var key in keys)
        {
            if (!_keys.Writer.TryWrite(key))
            {
                return false;
            }
        }
        return true;
    }

    private async Task RunAsync(CancellationToken cancellationToken)
    {
        var batch = new HashSet<string>(StringComparer.Ordinal);
        try
        {
            while (await _keys.Reader.WaitToReadAsync(cancellationToken))
            {
                batch.Clear();
                while (batch.Count < 10_000 && _keys.Reader.TryRead(out var key))
                {
                    batch.Add(key);
                }
                try
                {
                    var done = await _engine.FollowPeerChangesAsync(batch, cancellationToken);
                    _logger.LogInformation("{Drive}: told of {Count} changed key(s) by a peer: {Folders} folder(s) synced, {Stubs} stub(s) made, {Followed} file(s) followed a newer version",
                        _engine.Name, batch.Count, done.Folders, done.StubsMade, done.Followed);
                }
                catch (GeoDriveException ex)
                {
                    _engine.RecordEvent(DriveEventKind.Error, null,
                        $"A peer's notice of {batch.Count} change(s) was not followed: {ex.Message} The folders are synced at their next listing after updateWait.", ex.ErrorId);
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    _engine.RecordEvent(DriveEventKind.Error, null,
                        $"A peer's notice of {batch.Count} change(s) was not followed: {ex.Message} The folders are synced at their next listing after updateWait.", ErrorIds.CacheWriteFailed);
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
    }

    public async ValueTask DisposeAsync()
    {
        _keys.Writer.TryComplete();
        await _stop.CancelAsync();
        await _loop;
        _stop.Dispose();
    }
}
