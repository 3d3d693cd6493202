using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Native;

namespace GeoDrive.Mount.ProjFS.Notifications;

/// <summary>What the mount does with one ProjFS notification.</summary>
public enum EngineCall
{
    /// <summary>Nothing to tell the engine.</summary>
    None,
    /// <summary>IDriveFileSystem.Created.</summary>
    Created,
    /// <summary>IDriveFileSystem.Deleted.</summary>
    Deleted,
    /// <summary>IDriveFileSystem.Renamed (Path → NewPath).</summary>
    Renamed,
    /// <summary>IDriveFileSystem.ClosedAsync with <see cref="EngineAction.Modified"/>.</summary>
    Closed,
    /// <summary>IDriveFileSystem.OpenAsync with OpenIntent.Truncate: the old bytes were thrown away, nothing to recall.</summary>
    Overwritten,
    /// <summary>A handle was opened: counted by the mount (an open file is never dehydrated), the engine is not asked.</summary>
    Opened,
}

/// <summary>
/// The answer to one notification: the engine call to make (with the caller), and for the "pre"
/// notifications whether the operation may go ahead (a refusal becomes ERROR_ACCESS_DENIED).
/// </summary>
public sealed record EngineAction(EngineCall Call, string Path, Caller Caller, bool IsDirectory, bool Allow = true, string? NewPath = null, bool Modified = false)
{
    public static EngineAction Refuse(string path, Caller caller, bool isDirectory) => new(EngineCall.None, path, caller, isDirectory, Allow: false);
}

/// <summary>
/// ProjFS notification → engine call, decided without touching Windows so it is tested anywhere.
/// Paths arrive relative to the virtualization root with '\'; the engine gets '/'-separated paths.
/// </summary>
/// <param name="reportOwnProcess">
/// False in the service: the service's own I/O on the cache is the engine's (hashing, recall) and is
/// never reported. True only where applications share the mount's process (the conformance tests);
/// the mount then queues those calls instead of blocking on the engine.
/// </param>
public sealed class NotificationMapper(Func<string, bool> isInternal, int ownProcessId, bool reportOwnProcess = false)
{
    /// <summary>Process id 4 is the System process: SMB server access and kernel-mode callers.</summary>
    public const int SystemProcessId = 4;

    /// <summary>The caller of a callback: process id and image file name (full path from ProjFS; the engine's rules match on the file name).</summary>
    public static Caller CallerOf(uint processId, string? imageFileName)
    {
        var image = imageFileName ?? "";
        var slash = image.LastIndexOfAny(['\\', '/']);
        var name = slash < 0 ? image : image[(slash + 1)..];
        var pid = unchecked((int)processId);
        return new Caller(pid, name, IsSystem: pid is 0 or SystemProcessId);
    }

    /// <summary>"Docs\\a.txt" → "Docs/a.txt"; null or "" (outside the root) → "".</summary>
    public static string ToDrivePath(string? rootRelative) =>
        string.IsNullOrEmpty(rootRelative) ? "" : rootRelative.Replace('\\', '/').Trim('/');

    public EngineAction Map(PrjNotification notification, string? filePath, bool isDirectory, string? destinationPath,
        Caller caller, bool isFileModified = false)
    {
        var path = ToDrivePath(filePath);
        var destination = ToDrivePath(destinationPath);
        var own = caller.ProcessId == ownProcessId;
        switch (notification)
        {
            case PrjNotification.PreDelete:
                // The engine's own folder may be changed only by the engine (LiteDB's journal files).
                return isInternal(path) && !own ? EngineAction.Refuse(path, caller, isDirectory) : None(path, caller, isDirectory);
            case PrjNotification.PreRename:
                return (isInternal(path) || isInternal(destination)) && !own
                    ? EngineAction.Refuse(path, caller, isDirectory)
                    : None(path, caller, isDirectory);
            case PrjNotification.NewFileCreated or PrjNotification.FileOpened or PrjNotification.FileOverwritten when isInternal(path) && !own:
                // As FUSE refuses every path under .geodrive: nobody but the engine makes or opens it (ProjFS fails the create or open).
                return EngineAction.Refuse(path, caller, isDirectory);
            case PrjNotification.PreSetHardlink:
                // One file under two names would be two objects (the FUSE mount refuses links too).
                return EngineAction.Refuse(path, caller, isDirectory);
        }
        // The engine's own I/O on the cache (hashing for an upload, a recall, a sparse stub) is not
        // user activity, and reporting it back while the engine holds the file's lock would deadlock.
        if ((own && !reportOwnProcess) || isInternal(path) || (path.Length == 0 && destination.Length == 0))
        {
            return None(path, caller, isDirectory);
        }
        return notification switch
        {
            PrjNotification.NewFileCreated => new(EngineCall.Created, path, caller, isDirectory),
            PrjNotification.FileOverwritten when !isDirectory => new(EngineCall.Overwritten, path, caller, false),
            PrjNotification.FileOpened when !isDirectory => new(EngineCall.Opened, path, caller, false),
            PrjNotification.FileHandleClosedNoModification when !isDirectory => new(EngineCall.Closed, path, caller, false, Modified: false),
            PrjNotification.FileHandleClosedFileModified when !isDirectory => new(EngineCall.Closed, path, caller, false, Modified: true),
            // Windows deletes at the close of a handle marked delete-on-close; the name is gone now.
            PrjNotification.FileHandleClosedFileDeleted => new(EngineCall.Deleted, path, caller, isDirectory, Modified: isFileModified),
            PrjNotification.FileRenamed => Renamed(path, destination, caller, isDirectory),
            _ => None(path, caller, isDirectory),
        };
    }

    /// <summary>
    /// A rename reports both names; one is empty when the item moved across the root's border: moved in
    /// is a new file, moved out is a deleted one, and a move onto the engine's folder is never reported.
    /// </summary>
    private EngineAction Renamed(string from, string to, Caller caller, bool isDirectory)
    {
        var fromInside = from.Length > 0 && !isInternal(from);
        var toInside = to.Length > 0 && !isInternal(to);
        return (fromInside, toInside) switch
        {
            (true, true) => new(EngineCall.Renamed, from, caller, isDirectory, NewPath: to),
            (false, true) => new(EngineCall.Created, to, caller, isDirectory),
            (true, false) => new(EngineCall.Deleted, from, caller, isDirectory),
            _ => None(from, caller, isDirectory),
        };
    }

    private static EngineAction None(string path, Caller caller, bool isDirectory) => new(EngineCall.None, path, caller, isDirectory);
}
