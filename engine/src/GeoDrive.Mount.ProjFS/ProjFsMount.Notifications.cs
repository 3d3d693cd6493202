using System.Threading.Channels;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Notifications;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.ProjFS;

/// <summary>Notifications: what applications did in the root, passed on to the engine with their caller.</summary>
public sealed partial class ProjFsMount
{
    private readonly OpenCounts _open = new();

    // Engine calls for our own process's activity (ReportOwnProcess): in order, never while ProjFS waits.
    private readonly Channel<EngineAction> _queue = Channel.CreateBounded<EngineAction>(new BoundedChannelOptions(10_000) { SingleReader = true });
    private Task _queueWorker = Task.CompletedTask;
    private int _queued;

    /// <summary>Queued engine calls not yet made (tests wait for 0, like FUSE's outstanding releases).</summary>
    public int QueuedCount => Volatile.Read(ref _queued);

    private void StartQueue() => _queueWorker = Task.Run(async () =>
    {
        await foreach (var action in _queue.Reader.ReadAllAsync())
        {
            try
            {
                Tell(action);
            }
            catch (Exception ex)
            {
                Fail(action.Path, ex);
            }
            finally
            {
                Interlocked.Decrement(ref _queued);
            }
        }
    });

    private void Enqueue(EngineAction action)
    {
        Interlocked.Increment(ref _queued);
        if (!_queue.Writer.TryWrite(action))
        {
            // Full: wait for room rather than drop a create or a modified close.
            _queue.Writer.WriteAsync(action).AsTask().GetAwaiter().GetResult();
        }
    }

    private void StopQueue()
    {
        _queue.Writer.TryComplete();
        if (!_queueWorker.Wait(TimeSpan.FromSeconds(30)))
        {
            _logger.LogWarning("{Count} engine call(s) still queued when {Root} stopped", QueuedCount, Root);
        }
    }

    internal int Notify(PrjNotification notification, string? path, bool isDirectory, string? destination, Caller caller, bool isFileModified)
    {
        var action = _notifications.Map(notification, path, isDirectory, destination, caller, isFileModified);
        if (!action.Allow)
        {
            _logger.LogInformation("Refused {Notification} of {Path} by {Process} ({Pid})", notification, action.Path, caller.ImageName, caller.ProcessId);
            return HResult.AccessDenied;
        }
        if (action.Call == EngineCall.None)
        {
            return HResult.Ok;
        }
        // Open counts change at once (dehydration reads them); the engine calls follow, queued for our own process.
        if (!CountOpens(action, notification))
        {
            return HResult.Ok;
        }
        if (caller.ProcessId == Environment.ProcessId)
        {
            Enqueue(action);
        }
        else
        {
            Tell(action);
        }
        return HResult.Ok;
    }

    /// <summary>Counts opens and closes; false when the engine need not hear of it (a close that was not the last).</summary>
    private bool CountOpens(EngineAction action, PrjNotification notification)
    {
        switch (action.Call)
        {
            case EngineCall.Opened:
            case EngineCall.Overwritten:
            case EngineCall.Created when !action.IsDirectory && notification == PrjNotification.NewFileCreated:
                _open.Opened(action.Path);
                return true;
            case EngineCall.Closed:
                return _open.Closed(action.Path);
            case EngineCall.Deleted:
                _open.Closed(action.Path);
                return true;
            case EngineCall.Renamed:
                _open.Renamed(action.Path, action.NewPath!);
                return true;
            default:
                return true;
        }
    }

    /// <summary>Makes the engine call for one notification.</summary>
    private void Tell(EngineAction action)
    {
        var caller = action.Caller;
        switch (action.Call)
        {
            case EngineCall.Opened:
                // Registered with the engine too, so it never stubs an open file; a stub is not, since
                // OpenAsync would recall it in place — its data arrives by hydration (GetFileData).
                if (_drive.GetStateAttribute(action.Path) != nameof(FileState.Stubbed))
                {
                    Wait(_drive.OpenAsync(action.Path, caller, OpenIntent.Read, _stopping.Token));
                }
                break;
            case EngineCall.Created:
                _drive.Created(action.Path, caller, action.IsDirectory);
                break;
            case EngineCall.Overwritten:
                Wait(_drive.OpenAsync(action.Path, caller, OpenIntent.Truncate, _stopping.Token));
                break;
            case EngineCall.Closed:
                // The last handle of the file closed.
                Wait(_drive.ClosedAsync(action.Path, caller, action.Modified, _stopping.Token));
                RestubIfStreamed(action.Path, action.Modified);
                break;
            case EngineCall.Deleted:
                _drive.Deleted(action.Path, caller, action.IsDirectory);
                break;
            case EngineCall.Renamed:
                _drive.Renamed(action.Path, action.NewPath!, caller, action.IsDirectory);
                break;
        }
    }

    /// <summary>A stub hydrated only for a streaming process (backup*: recall: stream) becomes a stub again when its last handle closes.</summary>
    private void RestubIfStreamed(string path, bool modified)
    {
        bool streamed;
        lock (_streamed)
        {
            streamed = _streamed.Remove(path);
        }
        if (!streamed || modified)
        {
            return;
        }
        var result = DehydrateStreamed(path);
        if (result != HResult.Ok)
        {
            _logger.LogWarning("{Path} stays hydrated after a streamed read: PrjDeleteFile answered 0x{Result:X8}", path, result);
        }
    }
}
