using GeoDrive.Core.Paths;
using GeoDrive.Mount.Fuse.Native;

namespace GeoDrive.Mount.Fuse;

/// <summary>Names: look up, list, make and remove folders, delete and rename.</summary>
public sealed partial class FuseMount
{
    internal int GetAttr(string? fusePath, nint stat, ulong handle)
    {
        if (fusePath is null)
        {
            // An open file whose name is gone (unlinked while open).
            return _open.Get(handle) is { Descriptor: >= 0 } file
                ? (LibC.FStat(file.Descriptor, stat) == 0 ? 0 : LibC.NegativeErrno())
                : -Errno.ENOENT;
        }
        if (IsRoot(fusePath, out var root))
        {
            return root.Stat(stat);
        }
        // The name the kernel holds; on a case-insensitive drive the file may be found under another case.
        var asked = Relative(fusePath);
        var path = asked;
        AttributesAsked?.Invoke(path);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        var errno = _cache.Stat(path, stat);
        if (errno == -Errno.ENOENT && _names is not null && _names.Resolve(path) is var named && named != path)
        {
            // Case-insensitive drive: the name in another case; its folder is read only now that the exact name is missing.
            path = named;
            if (_drive.IsInternalPath(path))
            {
                return -Errno.ENOENT;
            }
            errno = _cache.Stat(path, stat);
        }
        if (errno == -Errno.ENOENT && path.Length > 0 && Wait(_drive.LookupMissingAsync(path, CurrentCaller())))
        {
            // From the bucket: made under the name its object recorded, which may differ in case from the one asked.
            errno = _cache.Stat(_names is null ? path : _names.Resolve(path), stat);
        }
        if (errno == 0 && LibC.IsRegularFile(stat))
        {
            // The kernel's lookup of a name comes here, and so does a stat of a name it holds (ADR 0036).
            _kernelNames.Used(asked);
        }
        return errno;
    }

    internal int ReadDir(string fusePath, Func<string, bool> add)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        Wait(_drive.BeforeEnumerateAsync(path, CurrentCaller()));
        if (_cache.Names(path, out var names) is var listed and < 0)
        {
            return listed;
        }
        if (!add(".") || !add(".."))
        {
            return 0;
        }
        foreach (var name in _names is null ? names : CaseInsensitiveNames.Once(names))
        {
            if (path.Length == 0 && _drive.IsInternalPath(name))
            {
                continue;
            }
            if (!add(name))
            {
                break;
            }
        }
        return 0;
    }

    internal int MkDir(string fusePath, uint mode)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.EACCES;
        }
        if (RefusedAsTooLong(path))
        {
            return -Errno.ENAMETOOLONG;
        }
        if (_cache.MkDir(path, mode) is var made and < 0)
        {
            return made;
        }
        WarnIfNarrowed(path, mode, _cache.KeepPermissions(path, mode));
        SetOwnerToCaller(path);
        _drive.Created(path, CurrentCaller(), isDirectory: true);
        return 0;
    }

    internal int Unlink(string fusePath)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        if (_cache.Unlink(path) is var unlinked and < 0)
        {
            return unlinked;
        }
        _drive.Deleted(path, CurrentCaller(), isDirectory: false);
        _kernelNames.Deleted(Relative(fusePath));
        return 0;
    }

    internal int RmDir(string fusePath)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        if (_cache.RmDir(path) is var removed and < 0)
        {
            return removed;
        }
        _drive.Deleted(path, CurrentCaller(), isDirectory: true);
        return 0;
    }

    internal int Rename(string fromFusePath, string toFusePath, uint flags)
    {
        var from = Named(fromFusePath);
        var to = Named(toFusePath);
        if (_names is not null && to == from && Relative(toFusePath) != from)
        {
            // A rename that changes only the name's case: the entry takes the name as written.
            to = DrivePath.Combine(DrivePath.Parent(to), DrivePath.Name(Relative(toFusePath)));
        }
        if (_drive.IsInternalPath(from) || _drive.IsInternalPath(to))
        {
            return -Errno.EACCES;
        }
        if ((flags & LibC.RenameExchange) != 0)
        {
            // Swapping two names atomically would need two uploads to agree; not offered.
            return -Errno.EINVAL;
        }
        if (RefusedAsTooLong(to) || RefusedAsTooLong(to + LongestBelow(Local(from))))
        {
            return -Errno.ENAMETOOLONG;
        }
        var isDirectory = Directory.Exists(Local(from));
        // The engine hears of a last close under either name before it hears of the rename. libfuse's path lock already keeps
        // a release (told inside its callback) from running beside a rename of its file or of a folder above it, as long as
        // nullpath_ok stays off; this wait keeps the order should either change.
        _open.WaitForReports(from, to);
        if (_cache.Rename(from, to, flags) is var renamed and < 0)
        {
            return renamed;
        }
        _open.Rename(from, to);
        _kernelNames.Renamed(Relative(fromFusePath), Relative(toFusePath));
        _drive.Renamed(from, to, CurrentCaller(), isDirectory);
        return 0;
    }

    /// <summary>
    /// A name longer than a drive may hold (<see cref="DrivePath.MaxBytes"/>) is refused before anything is made:
    /// the drive's event log says so, the application gets ENAMETOOLONG.
    /// </summary>
    private bool RefusedAsTooLong(string path)
    {
        if (!DrivePath.IsTooLong(path))
        {
            return false;
        }
        _drive.Refused(path, CurrentCaller(), DrivePath.TooLong(path));
        return true;
    }

    /// <summary>For a folder being renamed: the longest "/relative/path" below it ("" for a file), so that no path under the new name is too long.</summary>
    private static string LongestBelow(string localFolder)
    {
        if (!Directory.Exists(localFolder))
        {
            return "";
        }
        var longest = "";
        foreach (var entry in Directory.EnumerateFileSystemEntries(localFolder, "*", SearchOption.AllDirectories))
        {
            var below = "/" + Path.GetRelativePath(localFolder, entry);
            if (System.Text.Encoding.UTF8.GetByteCount(below) > System.Text.Encoding.UTF8.GetByteCount(longest))
            {
                longest = below;
            }
        }
        return longest;
    }
}
