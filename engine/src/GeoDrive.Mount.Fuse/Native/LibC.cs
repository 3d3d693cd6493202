using System.Runtime.InteropServices;

namespace GeoDrive.Mount.Fuse.Native;

/// <summary>
/// The libc calls the mount makes on the cache folder. Structures the kernel defines (struct stat,
/// struct statvfs, struct timespec[2]) are not laid out here: libfuse hands us its buffer and libc
/// fills it. The two fields read from a filled struct stat, its file type and its inode number, are read here at their
/// offsets on x86-64 and arm64 (<see cref="IsRegularFile"/>, <see cref="InodeNumber"/>).
/// </summary>
internal static partial class LibC
{
    private const string Library = "libc.so.6";

    public const int AtSymlinkNoFollow = 0x100;
    public const int MntDetach = 2;
    public const uint RenameNoReplace = 1;
    public const uint RenameExchange = 2;

    public const int ORdOnly = 0;
    public const int OWrOnly = 1;
    public const int OAccMode = 3;
    public const int OCreat = 0x40;
    public const int OExcl = 0x80;
    public const int OTrunc = 0x200;
    public const int OCloExec = 0x80000;

    [LibraryImport(Library, EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Open(string path, int flags, uint mode);

    [LibraryImport(Library, EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    [LibraryImport(Library, EntryPoint = "pread", SetLastError = true)]
    public static unsafe partial nint PRead(int fd, byte* buffer, nuint count, long offset);

    [LibraryImport(Library, EntryPoint = "pwrite", SetLastError = true)]
    public static unsafe partial nint PWrite(int fd, byte* buffer, nuint count, long offset);

    public const int SeekEnd = 2;

    [LibraryImport(Library, EntryPoint = "lseek", SetLastError = true)]
    public static partial long LSeek(int fd, long offset, int whence);

    [LibraryImport(Library, EntryPoint = "ftruncate", SetLastError = true)]
    public static partial int FTruncate(int fd, long length);

    /// <summary>fallocate(2)'s mode flag that reserves space without changing the file's size.</summary>
    public const int FallocKeepSize = 0x01;

    [LibraryImport(Library, EntryPoint = "fallocate", SetLastError = true)]
    public static partial int FAllocate(int fd, int mode, long offset, long length);

    [LibraryImport(Library, EntryPoint = "fsync", SetLastError = true)]
    public static partial int FSync(int fd);

    [LibraryImport(Library, EntryPoint = "fdatasync", SetLastError = true)]
    public static partial int FDataSync(int fd);

    /// <summary>Larger than struct stat on every Linux architecture (144 bytes on x86-64, 128 on arm64).</summary>
    public const int StatBufferSize = 512;

    /// <summary>Where st_mode lies in struct stat: after st_dev, st_ino and st_nlink on x86-64, before st_nlink on arm64.</summary>
    private static readonly int StatModeOffset = RuntimeInformation.ProcessArchitecture is Architecture.Arm64 ? 16 : 24;

    /// <summary>Whether a filled struct stat is a regular file's (S_IFREG).</summary>
    public static unsafe bool IsRegularFile(nint statBuffer) => (*(uint*)(statBuffer + StatModeOffset) & 0xF000) == 0x8000;

    /// <summary>A filled struct stat's st_ino, which follows st_dev (8 bytes) on x86-64 and arm64 alike.</summary>
    public static unsafe ulong InodeNumber(nint statBuffer) => *(ulong*)(statBuffer + 8);

    [LibraryImport(Library, EntryPoint = "lstat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int LStat(string path, nint statBuffer);

    [LibraryImport(Library, EntryPoint = "fstat", SetLastError = true)]
    public static partial int FStat(int fd, nint statBuffer);

    [LibraryImport(Library, EntryPoint = "statvfs", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int StatVfs(string path, nint statVfsBuffer);

    [LibraryImport(Library, EntryPoint = "renameat2", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int RenameAt2(int oldDirFd, string oldPath, int newDirFd, string newPath, uint flags);

    [LibraryImport(Library, EntryPoint = "utimensat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int UTimensAt(int dirFd, string path, nint times, int flags);

    [LibraryImport(Library, EntryPoint = "fchmod", SetLastError = true)]
    public static partial int FChMod(int fd, uint mode);

    [LibraryImport(Library, EntryPoint = "fchown", SetLastError = true)]
    public static partial int FChOwn(int fd, uint uid, uint gid);

    [LibraryImport(Library, EntryPoint = "futimens", SetLastError = true)]
    public static partial int FUTimens(int fd, nint times);

    public const int AtRemoveDir = 0x200;

    [LibraryImport(Library, EntryPoint = "fchmodat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int FChModAt(int dirFd, string name, uint mode, int flags);

    [LibraryImport(Library, EntryPoint = "fchownat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int FChOwnAt(int dirFd, string name, uint uid, uint gid, int flags);

    [LibraryImport(Library, EntryPoint = "fstatat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int FStatAt(int dirFd, string name, nint statBuffer, int flags);

    [LibraryImport(Library, EntryPoint = "mkdirat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int MkDirAt(int dirFd, string name, uint mode);

    [LibraryImport(Library, EntryPoint = "unlinkat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int UnlinkAt(int dirFd, string name, int flags);

    [LibraryImport(Library, EntryPoint = "fgetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial nint FGetXAttr(int fd, string name, nint value, nuint size);

    [LibraryImport(Library, EntryPoint = "fsetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int FSetXAttr(int fd, string name, nint value, nuint size, int flags);

    [LibraryImport(Library, EntryPoint = "flistxattr", SetLastError = true)]
    public static partial nint FListXAttr(int fd, nint list, nuint size);

    [LibraryImport(Library, EntryPoint = "fremovexattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int FRemoveXAttr(int fd, string name);

    [LibraryImport(Library, EntryPoint = "umount2", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int UMount2(string target, int flags);

    [LibraryImport(Library, EntryPoint = "geteuid")]
    public static partial uint GetEUid();

    /// <summary>ioctl(2) with a pointer argument.</summary>
    [LibraryImport(Library, EntryPoint = "ioctl", SetLastError = true)]
    public static unsafe partial int IoCtl(int fd, nuint request, void* argument);

    /// <summary>The errno of the last call above, negated as FUSE callbacks return it.</summary>
    public static int NegativeErrno() => -Marshal.GetLastPInvokeError();
}

/// <summary>The errno values the mount returns (Linux generic numbering, the same on x86_64 and arm64).</summary>
internal static class Errno
{
    public const int EPERM = 1;
    public const int ENOENT = 2;
    public const int EIO = 5;
    public const int EBADF = 9;
    public const int EACCES = 13;
    public const int EBUSY = 16;
    public const int EEXIST = 17;
    public const int EINVAL = 22;
    public const int ENOSPC = 28;
    public const int ENAMETOOLONG = 36;
    public const int ERANGE = 34;
    public const int ENOSYS = 38;
    public const int ENODATA = 61;
    public const int EILSEQ = 84;
    public const int EOPNOTSUPP = 95;
    public const int ENOTCONN = 107;
    public const int ETIMEDOUT = 110;
    public const int EHOSTUNREACH = 113;
}
