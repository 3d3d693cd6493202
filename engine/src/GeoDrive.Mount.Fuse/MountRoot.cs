using GeoDrive.Core.Errors;
using GeoDrive.Core.Paths;
using GeoDrive.Mount.Fuse.Native;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// The drive's root as applications see it, and the cache behind it. The cache is the service's alone (0700,
/// whatever the umask or whoever made the folder): local users reach the drive only through the mount, so
/// none can plant a file in the cache or swap a folder of it for a link. The root shows, and keeps, the mount
/// folder's own mode, owner and times, through a descriptor opened before the mount hid the folder.
/// See docs/decisions/0011-private-cache.md.
/// </summary>
internal sealed class MountRoot : IDisposable
{
    private int _folder;

    private MountRoot(int folder) => _folder = folder;

    /// <summary>Makes the cache private and holds the mount folder open; call before mounting over it.</summary>
    public static MountRoot Open(string mountPath, string cachePath)
    {
        OwnerOnly.Folder(cachePath);
        var folder = LibC.Open(mountPath, LibC.ORdOnly | LibC.OCloExec, 0);
        if (folder < 0)
        {
            throw new GeoDriveException(ErrorIds.MountFailed, ErrorKind.ResourceUnavailable,
                $"The drive could not be mounted at '{mountPath}': the folder could not be opened (errno {-LibC.NegativeErrno()}).",
                "Check that the mount folder exists and is a folder the service can read.");
        }
        return new MountRoot(folder);
    }

    public int Stat(nint stat) => Result(LibC.FStat(_folder, stat));

    public int ChMod(uint mode) => Result(LibC.FChMod(_folder, mode));

    public int ChOwn(uint uid, uint gid) => Result(LibC.FChOwn(_folder, uid, gid));

    public int UTimens(nint times) => Result(LibC.FUTimens(_folder, times));

    private static int Result(int returned) => returned == 0 ? 0 : LibC.NegativeErrno();

    public void Dispose()
    {
        var folder = Interlocked.Exchange(ref _folder, -1);
        if (folder >= 0)
        {
            LibC.Close(folder);
        }
    }
}
