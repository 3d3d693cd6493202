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

    internal int Notify(PrjNotification notification, string? path, bool isDirectory, string? destination, Caller caller, bool isFileModified)
    {
        var action = _notifications.Map(notification, path, isDirectory, destination, caller, isFileModified);
        if (!action.Allow)
        {
            _logger.LogInformation("Refused {Notification} of {Path} by {Process} ({Pid})", notification, action.Path, caller.ImageName, caller.ProcessId);
            return HResult.AccessDenied;
        }
        switch (action.Call)
        {
            case EngineCall.Opened:
                _open.Opened(action.Path);
                break;
            case EngineCall.Created:
                if (!action.IsDirectory && notification == PrjNotification.NewFileCreated)
                {
                    _open.Opened(action.Path);
                }
                _drive.Created(action.Path, caller, action.IsDirectory);
                break;
            case EngineCall.Overwritten:
                _open.Opened(action.Path);
                Wait(_drive.OpenAsync(action.Path, caller, OpenIntent.Truncate, _stopping.Token));
                break;
            case EngineCall.Closed:
                if (_open.Closed(action.Path))
                {
                    Wait(_drive.ClosedAsync(action.Path, caller, action.Modified, _stopping.Token));
                    RestubIfStreamed(action.Path, action.Modified);
                }
                break;
            case EngineCall.Deleted:
                _open.Closed(action.Path);
                _drive.Deleted(action.Path, caller, action.IsDirectory);
                break;
            case EngineCall.Renamed:
                _open.Renamed(action.Path, action.NewPath!);
                _drive.Renamed(action.Path, action.NewPath!, caller, action.IsDirectory);
                break;
        }
        return HResult.Ok;
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
