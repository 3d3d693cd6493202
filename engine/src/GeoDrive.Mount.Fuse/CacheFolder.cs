using GeoDrive.Core.Errors;
using GeoDrive.Core.Paths;
using GeoDrive.Mount.Fuse.Native;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// Every call the mount makes on its cache folder, by drive-relative path: each beneath the cache and refusing
/// a link at any step (<see cref="BeneathCache"/>; a link is ELOOP). Calls on a name go to its folder's
/// descriptor and never follow a link in the name itself. Each returns 0 (or a length) or the negated errno,
/// as FUSE callbacks do. See docs/decisions/0011-private-cache.md.
/// </summary>
internal sealed class CacheFolder : IDisposable
{
    private int _root;

    private CacheFolder(int root) => _root = root;

    /// <summary>Holds the cache folder open for the mount's life (call once it is private, before mounting).</summary>
    public static CacheFolder Open(string cachePath)
    {
        var root = BeneathCache.OpenRoot(cachePath);
        if (root < 0)
        {
            throw new GeoDriveException(ErrorIds.MountFailed, ErrorKind.ResourceUnavailable,
                $"The drive could not be mounted: its cache folder '{cachePath}' could not be opened (errno {-root}).",
                "Check that the cache folder exists and is a folder (not a link) the service can read.");
        }
        return new CacheFolder(root);
    }

    /// <summary>A descriptor on the file, or -errno.</summary>
    public int Open(string relative, int flags, uint mode) => BeneathCache.OpenAt(_root, relative, flags, mode);

    public int Truncate(string relative, long size) =>
        WithDescriptor(relative, BeneathCache.OWrOnly, fd => Result(LibC.FTruncate(fd, size)));

    public int Stat(string relative, nint stat) =>
        InFolder(relative, (folder, name) => LibC.FStatAt(folder, name, stat, LibC.AtSymlinkNoFollow));

    public int ChMod(string relative, uint mode) =>
        InFolder(relative, (folder, name) => LibC.FChModAt(folder, name, mode, LibC.AtSymlinkNoFollow));

    public int ChOwn(string relative, uint uid, uint gid) =>
        InFolder(relative, (folder, name) => LibC.FChOwnAt(folder, name, uid, gid, LibC.AtSymlinkNoFollow));

    public int UTimens(string relative, nint times) =>
        InFolder(relative, (folder, name) => LibC.UTimensAt(folder, name, times, LibC.AtSymlinkNoFollow));

    public int MkDir(string relative, uint mode) => InFolder(relative, (folder, name) => LibC.MkDirAt(folder, name, mode));

    /// <summary>The read, write and execute bits of owner, group and others (a mode without set-id and sticky bits).</summary>
    public const uint PermissionBits = 0b111_111_111;

    /// <summary>A folder the mount has just made gets the permission bits asked for (<see cref="KeepPermissions(int, uint)"/>).</summary>
    public int KeepPermissions(string relative, uint mode) =>
        WithDescriptor(relative, BeneathCache.ODirectory, folder => KeepPermissions(folder, mode));

    /// <summary>
    /// Gives a file or folder the mount has just made exactly the permission bits its maker asked for: the kernel already
    /// applied the maker's umask to <paramref name="mode"/>, and the service's own umask narrowed them again when the cache
    /// made it (a maker under umask 002 got 0644 for 0664). Set-id and sticky bits stay as the cache made them (a folder's
    /// inherited set-group-id). Returns 0 or -errno.
    /// </summary>
    public static int KeepPermissions(int descriptor, uint mode)
    {
        if (OperatingSystem.IsWindows())
        {
            return 0;
        }
        using var handle = new SafeFileHandle(descriptor, ownsHandle: false);
        var made = (uint)File.GetUnixFileMode(handle);
        var asked = (made & ~PermissionBits) | (mode & PermissionBits);
        return asked == made ? 0 : Result(LibC.FChMod(descriptor, asked));
    }

    public int Unlink(string relative) => InFolder(relative, (folder, name) => LibC.UnlinkAt(folder, name, 0));

    public int RmDir(string relative) => InFolder(relative, (folder, name) => LibC.UnlinkAt(folder, name, LibC.AtRemoveDir));

    public int Rename(string from, string to, uint flags) =>
        BeneathCache.InFolder(_root, from, (fromFolder, fromName) => InFolder(to, (toFolder, toName) => LibC.RenameAt2(fromFolder, fromName, toFolder, toName, flags)));

    /// <summary>Runs <paramref name="call"/> on a descriptor of the file or folder (opened for reading unless told otherwise), or returns -errno.</summary>
    public int WithDescriptor(string relative, int flags, Func<int, int> call)
    {
        var descriptor = Open(relative, flags | BeneathCache.ONonBlock, 0);
        if (descriptor < 0)
        {
            return descriptor;
        }
        try
        {
            return call(descriptor);
        }
        finally
        {
            LibC.Close(descriptor);
        }
    }

    /// <summary>The names in a folder of the cache (0), or -errno: the folder opened beneath the cache and read through its descriptor.</summary>
    public int Names(string relative, out List<string> names)
    {
        var found = new List<string>();
        names = found;
        return WithDescriptor(relative, BeneathCache.ORdOnly | BeneathCache.ODirectory, fd =>
        {
            found.AddRange(Directory.EnumerateFileSystemEntries($"/proc/self/fd/{fd}").Select(Path.GetFileName)!);
            return 0;
        });
    }

    private int InFolder(string relative, Func<int, string, int> call) =>
        BeneathCache.InFolder(_root, relative, (folder, name) => Result(call(folder, name)));

    private static int Result(int returned) => returned == 0 ? 0 : LibC.NegativeErrno();

    public void Dispose()
    {
        var root = Interlocked.Exchange(ref _root, -1);
        if (root >= 0)
        {
            LibC.Close(root);
        }
    }
}
