using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.ProjFS.Dehydration;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Projection;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.ProjFS;

/// <summary>Stubbing on Windows: dehydration (delete the local data, project the placeholder again).</summary>
public sealed partial class ProjFsMount
{
    /// <summary>
    /// Turns <paramref name="entry"/>'s file into a placeholder without data, carrying
    /// FILE_ATTRIBUTE_OFFLINE. Call it with the entry the engine has just verified (Cached: local bytes
    /// hashed, object HEADed); <see cref="DehydrationRules"/> are applied again against the file on disk
    /// at this moment. Throws the engine's error ids (FileBusy, FileNotUploaded, …) when refused.
    /// </summary>
    public DehydrationDecision Dehydrate(FileEntry entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        var decision = DehydrationRules.Decide(entry, OnDisk(entry.Path), _open.IsOpen(entry.Path));
        switch (decision.Verdict)
        {
            case DehydrationVerdict.AlreadyStub:
                return decision;
            case DehydrationVerdict.Refuse:
                throw new GeoDriveException(decision.ErrorId ?? ErrorIds.FileNotUploaded, ErrorKind.InvalidOperation,
                    decision.Reason + " It was not stubbed.", "Wait until Get-CloudFile shows it Cached and closed, then try again.");
        }
        var item = ProjectedItem.File(entry) with { State = FileState.Stubbed };
        var result = DeleteAndReproject(entry.Path, (PrjUpdateTypes)decision.UpdateFlags, item);
        if (result != HResult.Ok)
        {
            throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.ResourceUnavailable,
                $"ProjFS refused to dehydrate '{entry.Path}' (0x{result:X8}); its local data stays.", "Close the applications that use it and try again.");
        }
        _logger.LogInformation("Dehydrated {Path}", entry.Path);
        return decision;
    }

    /// <summary>The engine's stubbing step under ProjFS (<see cref="ILocalStubs"/>): dehydration, refused unless the rules allow it.</summary>
    void ILocalStubs.MakeStub(FileEntry entry, string localPath) => Dehydrate(entry);

    /// <summary>A file hydrated for a streaming read, unchanged: back to a placeholder (only unchanged placeholders qualify, no dirty flags).</summary>
    private int DehydrateStreamed(string path)
    {
        if (_projection.Find(path) is not { IsDirectory: false } item)
        {
            return HResult.FileNotFound;
        }
        var onDisk = OnDisk(path);
        return onDisk.State == PrjFileState.HydratedPlaceholder
            ? DeleteAndReproject(path, PrjUpdateTypes.None, item)
            : HResult.AccessDenied;
    }

    private int DeleteAndReproject(string path, PrjUpdateTypes flags, ProjectedItem item)
    {
        var result = ProjectedFsLib.DeleteFile(_context, Native(path), flags, out var cause);
        if (result != HResult.Ok)
        {
            _logger.LogInformation("PrjDeleteFile({Path}) answered 0x{Result:X8} ({Cause})", path, result, cause);
            return result;
        }
        // Written at once, so the stub is on disk (size, times, OFFLINE) and not only in the projection.
        return WritePlaceholder(item);
    }

    private OnDiskFile OnDisk(string path)
    {
        var full = Path.Combine(Root, Native(path));
        var info = new FileInfo(full);
        if (!info.Exists || ProjectedFsLib.GetOnDiskFileState(full, out var state) != HResult.Ok)
        {
            return new OnDiskFile(false, PrjFileState.None, 0, default, false);
        }
        return new OnDiskFile(true, state, info.Length, new DateTimeOffset(info.LastWriteTimeUtc, TimeSpan.Zero), info.IsReadOnly);
    }
}
