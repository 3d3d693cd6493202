using System.Runtime.InteropServices;
using GeoDrive.Core.Errors;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Core.Paths;

/// <summary>
/// How the service (root) opens anything in a drive's cache on Linux: beneath the cache folder, refusing a
/// symbolic link at every step of the path, the last one included (openat2 with RESOLVE_BENEATH,
/// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS). The kernel resolves and refuses in the same call, so no one
/// who swaps a folder of the cache for a link between a check and an open can win that race.
/// A link met on the way is ELOOP, a path that would leave the cache EXDEV. See docs/decisions/0011-private-cache.md.
/// Linux only, but for <see cref="OpenHandle"/>, which opens by path on Windows (ProjFS keeps its cache under the
/// service's ACL and has no links to plant).
/// </summary>
public static partial class BeneathCache
{
    public const int ENOENT = 2;
    public const int EXDEV = 18;
    public const int ELOOP = 40;

    public const int ORdOnly = 0;
    public const int OWrOnly = 1;
    public const int ORdWr = 2;
    public const int OCreat = 0x40;
    public const int OExcl = 0x80;
    public const int OTrunc = 0x200;
    public const int ONonBlock = 0x800;
    public const int OCloExec = 0x80000;
    public const int OPath = 0x200000;

    /// <summary>O_DIRECTORY: the one flag used here whose value differs between x86_64 and arm64.</summary>
    public static readonly int ODirectory = RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm ? 0x4000 : 0x10000;

    /// <summary>
    /// The open flags openat2 takes (x86_64 and arm64 alike): a FUSE open passes the file's own flags, which may
    /// carry kernel-internal bits (__FMODE_EXEC, __FMODE_NONOTIFY) that openat2 refuses with EINVAL.
    /// </summary>
    private const int ValidOpenFlags = 0x7FFFC3;

    private const long SysOpenAt2 = 437;
    private const ulong ResolveNoMagicLinks = 0x02;
    private const ulong ResolveNoSymlinks = 0x04;
    private const ulong ResolveBeneath = 0x08;

    [StructLayout(LayoutKind.Sequential)]
    private struct OpenHow
    {
        public ulong Flags;
        public ulong Mode;
        public ulong Resolve;
    }

    /// <summary>
    /// Opens <paramref name="relative"/> ("" or "." for the cache folder itself) beneath <paramref name="cacheRoot"/>:
    /// a descriptor (close-on-exec), or the negated errno (-ELOOP for a link on the way, -EXDEV for a way out).
    /// </summary>
    public static int Open(string cacheRoot, string relative, int flags, uint mode)
    {
        var root = OpenRoot(cacheRoot);
        if (root < 0)
        {
            return root;
        }
        try
        {
            return OpenAt(root, relative, flags, mode);
        }
        finally
        {
            NativeClose(root);
        }
    }

    /// <summary>A descriptor of the cache folder itself (O_PATH), for <see cref="OpenAt"/> and <see cref="InFolder(int, string, Func{int, string, int})"/>; or -errno.</summary>
    public static int OpenRoot(string cacheRoot) =>
        NativeOpen(cacheRoot, OPath | ODirectory | OCloExec, 0) is var root and >= 0 ? root : -Marshal.GetLastPInvokeError();

    /// <summary>As <see cref="Open(string, string, int, uint)"/>, beneath a cache folder already open (<see cref="OpenRoot"/>).</summary>
    public static unsafe int OpenAt(int root, string relative, int flags, uint mode)
    {
        var how = new OpenHow
        {
            Flags = (ulong)(uint)((flags & ValidOpenFlags) | OCloExec),
            // openat2 refuses file-type bits (a FUSE create passes S_IFREG) and any mode without O_CREAT.
            Mode = (flags & OCreat) != 0 ? mode & 0xFFF : 0,
            Resolve = ResolveBeneath | ResolveNoSymlinks | ResolveNoMagicLinks,
        };
        var path = System.Text.Encoding.UTF8.GetBytes((relative.Length == 0 ? "." : relative) + "\0");
        fixed (byte* p = path)
        {
            var descriptor = Syscall(SysOpenAt2, root, (nint)p, (nint)(&how), sizeof(OpenHow));
            return descriptor >= 0 ? (int)descriptor : -Marshal.GetLastPInvokeError();
        }
    }

    /// <summary>
    /// Runs an *at call on the last name of <paramref name="relative"/> inside its folder, the folder opened
    /// beneath the cache (so no link on the way to it is followed). The call must not follow a link in the last
    /// name itself (AT_SYMLINK_NOFOLLOW, or a call that never does). Returns the call's result, or -errno.
    /// </summary>
    public static int InFolder(int root, string relative, Func<int, string, int> call)
    {
        var slash = relative.LastIndexOf('/');
        if (slash < 0)
        {
            // A name in the cache folder itself: its descriptor serves.
            return call(root, relative);
        }
        var folder = OpenAt(root, relative[..slash], OPath | ODirectory, 0);
        if (folder < 0)
        {
            return folder;
        }
        try
        {
            return call(folder, relative[(slash + 1)..]);
        }
        finally
        {
            NativeClose(folder);
        }
    }

    /// <summary>Closes a descriptor this class handed out.</summary>
    public static void Close(int descriptor) => NativeClose(descriptor);

    /// <summary>
    /// A handle on a file of the cache for the engine: <paramref name="localPath"/> must lie under
    /// <paramref name="cacheRoot"/>. A link on the way is refused with <see cref="ErrorIds.PlantedLink"/>; a missing
    /// file is a <see cref="FileNotFoundException"/>; any other failure an <see cref="IOException"/> whose HResult is the errno.
    /// </summary>
    public static SafeFileHandle OpenHandle(string cacheRoot, string localPath, FileMode mode, FileAccess access, UnixFileMode createMode = UnixFileMode.UserRead | UnixFileMode.UserWrite)
    {
        var rootFull = Path.GetFullPath(cacheRoot).TrimEnd('/');
        var full = Path.GetFullPath(localPath);
        if (full != rootFull && !full.StartsWith(rootFull + "/", StringComparison.Ordinal))
        {
            throw new ArgumentException($"'{localPath}' is not in the cache '{cacheRoot}'.", nameof(localPath));
        }
        if (OperatingSystem.IsWindows())
        {
            return File.OpenHandle(full, mode, access, FileShare.ReadWrite | FileShare.Delete, FileOptions.Asynchronous);
        }
        var relative = full.Length == rootFull.Length ? "" : full[(rootFull.Length + 1)..];
        var flags = (access switch { FileAccess.Read => ORdOnly, FileAccess.Write => OWrOnly, _ => ORdWr }) | mode switch
        {
            FileMode.CreateNew => OCreat | OExcl,
            FileMode.Create => OCreat | OTrunc,
            FileMode.OpenOrCreate => OCreat,
            FileMode.Truncate => OTrunc,
            _ => 0,
        };
        var descriptor = Open(rootFull, relative, flags, (uint)createMode);
        if (descriptor >= 0)
        {
            return new SafeFileHandle(descriptor, ownsHandle: true);
        }
        throw -descriptor switch
        {
            ELOOP or EXDEV => Refused(relative),
            ENOENT => new FileNotFoundException($"'{relative}' is not in the drive's cache.", full),
            var errno => new IOException($"'{relative}' in the drive's cache could not be opened: {Marshal.GetPInvokeErrorMessage(errno)} (errno {errno}).", errno),
        };
    }

    /// <summary>The refusal of a path that goes through a link, as the engine reports it.</summary>
    public static GeoDriveException Refused(string relative) => new(
        ErrorIds.PlantedLink, ErrorKind.PermissionDenied,
        $"'{relative}' in the drive's cache goes through a link, which GeoDrive never follows; nothing was read or written through it.",
        "Remove the link from the cache folder (it was not made through the drive), and check who can write there.");

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int NativeOpen(string path, int flags, uint mode);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int NativeClose(int fd);

    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static partial long Syscall(long number, int dirFd, nint path, nint how, nint size);
}
