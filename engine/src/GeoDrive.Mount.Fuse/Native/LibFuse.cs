using System.Runtime.InteropServices;

namespace GeoDrive.Mount.Fuse.Native;

/// <summary>
/// libfuse3's high-level API (fuse.h, FUSE_USE_VERSION 312): Debian 12's fuse3 3.14 (libfuse3.so.3), or libfuse 3.17 and
/// later (libfuse3.so.4) where it is installed, which is taken first (<see cref="LibFuseLoader"/>): it lets an open
/// answer with a backing file (passthrough, docs/decisions/0034-fuse-passthrough.md). The structures used here are
/// laid out alike in both. dlsym returns each symbol's default version: fuse_new_31@@FUSE_3.1 (3.17 has no default
/// fuse_new), fuse_loop_mt@@FUSE_3.12.
/// </summary>
internal static unsafe partial class LibFuse
{
    public const string Library = "libfuse3.so.3";

    [LibraryImport(Library, EntryPoint = "fuse_new_31")]
    public static partial nint New(FuseArgs* args, FuseOperations* operations, nuint operationsSize, nint privateData);

    /// <summary>FUSE_VERSION of the library loaded: major * 100 + minor (314, 317).</summary>
    [LibraryImport(Library, EntryPoint = "fuse_version")]
    public static partial int Version();

    [LibraryImport(Library, EntryPoint = "fuse_get_session")]
    public static partial nint GetSession(nint fuse);

    /// <summary>The session's /dev/fuse descriptor (a backing file is registered on it).</summary>
    [LibraryImport(Library, EntryPoint = "fuse_session_fd")]
    public static partial int SessionFd(nint session);

    [LibraryImport(Library, EntryPoint = "fuse_mount", StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Mount(nint fuse, string mountPoint);

    [LibraryImport(Library, EntryPoint = "fuse_loop_mt")]
    public static partial int LoopMultiThreaded(nint fuse, nint loopConfig);

    [LibraryImport(Library, EntryPoint = "fuse_loop_cfg_create")]
    public static partial nint LoopConfigCreate();

    [LibraryImport(Library, EntryPoint = "fuse_loop_cfg_destroy")]
    public static partial void LoopConfigDestroy(nint loopConfig);

    [LibraryImport(Library, EntryPoint = "fuse_loop_cfg_set_max_threads")]
    public static partial void LoopConfigSetMaxThreads(nint loopConfig, uint maxThreads);

    [LibraryImport(Library, EntryPoint = "fuse_loop_cfg_set_idle_threads")]
    public static partial void LoopConfigSetIdleThreads(nint loopConfig, uint idleThreads);

    /// <summary>Drops the kernel's cached attributes and pages of a path the high-level library knows (fuse 3.1+); -ENOENT when it is not cached.</summary>
    [LibraryImport(Library, EntryPoint = "fuse_invalidate_path", StringMarshalling = StringMarshalling.Utf8)]
    public static partial int InvalidatePath(nint fuse, string path);

    /// <summary>FUSE_ROOT_ID: the node id of the mount's root.</summary>
    public const ulong RootNode = 1;

    /// <summary>
    /// Tells the kernel to drop a name from its cache (fuse_lowlevel.h, fuse 2.8+); -ENOENT when it holds no such name. It
    /// waits for the folder's lock, so it is never called while serving a request.
    /// </summary>
    [LibraryImport(Library, EntryPoint = "fuse_lowlevel_notify_inval_entry")]
    public static partial int NotifyInvalEntry(nint session, ulong parent, byte* name, nuint length);

    [LibraryImport(Library, EntryPoint = "fuse_exit")]
    public static partial void Exit(nint fuse);

    [LibraryImport(Library, EntryPoint = "fuse_unmount")]
    public static partial void Unmount(nint fuse);

    [LibraryImport(Library, EntryPoint = "fuse_destroy")]
    public static partial void Destroy(nint fuse);

    [LibraryImport(Library, EntryPoint = "fuse_get_context")]
    public static partial FuseContext* GetContext();

    [LibraryImport(Library, EntryPoint = "fuse_opt_free_args")]
    public static partial void FreeArgs(FuseArgs* args);
}

[StructLayout(LayoutKind.Sequential)]
internal struct FuseArgs
{
    public int Argc;
    public nint Argv;
    public int Allocated;
}

/// <summary>struct fuse_context: who made the current request.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct FuseContext
{
    public nint Fuse;
    public uint Uid;
    public uint Gid;
    public int Pid;
    public nint PrivateData;
    public uint Umask;
}

/// <summary>
/// struct fuse_buf (fuse_common.h): bytes in memory (<see cref="Mem"/>), or in a file (<see cref="Fd"/>, from
/// <see cref="Pos"/> with <see cref="FdSeek"/>), which libfuse splices into /dev/fuse.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct FuseBuf
{
    public const int IsFd = 1 << 1;
    public const int FdSeek = 1 << 2;

    public nuint Size;
    public int Flags;
    public byte* Mem;
    public int Fd;
    public long Pos;
}

/// <summary>struct fuse_bufvec with one buffer, as a read_buf answer: allocated with malloc, freed by libfuse once answered.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct FuseBufVec
{
    public nuint Count;
    public nuint Index;
    public nuint Offset;
    public FuseBuf Buf;
}

/// <summary>
/// struct fuse_file_info: open flags, our handle (fh), and from libfuse 3.17 the backing file's id (40 bytes in 3.14, 64
/// from 3.17: <see cref="BackingId"/> is written only when the library is 3.17 or later). Of the bit fields direct_io and noflush
/// (the same bits in 3.14 and 3.17) are set here; the rest are left as libfuse set them.
/// </summary>
[StructLayout(LayoutKind.Sequential)]
internal struct FuseFileInfo
{
    public const uint DirectIo = 1 << 1;
    public const uint NoFlush = 1 << 7;

    public int Flags;
    public uint BitFields;
    public uint Padding2;
    public ulong FileHandle;
    public ulong LockOwner;
    public uint PollEvents;
    public int BackingId;
}

/// <summary>
/// struct fuse_operations up to lseek, in declaration order. Unset entries are null: libfuse answers
/// ENOSYS for them (or does without, as for opendir/access).
/// </summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct FuseOperations
{
    public delegate* unmanaged<byte*, nint, FuseFileInfo*, int> GetAttr;
    public nint ReadLink;
    public nint MkNod;
    public delegate* unmanaged<byte*, uint, int> MkDir;
    public delegate* unmanaged<byte*, int> Unlink;
    public delegate* unmanaged<byte*, int> RmDir;
    public delegate* unmanaged<byte*, byte*, int> Symlink;
    public delegate* unmanaged<byte*, byte*, uint, int> Rename;
    public delegate* unmanaged<byte*, byte*, int> Link;
    public delegate* unmanaged<byte*, uint, FuseFileInfo*, int> ChMod;
    public delegate* unmanaged<byte*, uint, uint, FuseFileInfo*, int> ChOwn;
    public delegate* unmanaged<byte*, long, FuseFileInfo*, int> Truncate;
    public delegate* unmanaged<byte*, FuseFileInfo*, int> Open;
    public delegate* unmanaged<byte*, byte*, nuint, long, FuseFileInfo*, int> Read;
    public delegate* unmanaged<byte*, byte*, nuint, long, FuseFileInfo*, int> Write;
    public delegate* unmanaged<byte*, nint, int> StatFs;
    public delegate* unmanaged<byte*, FuseFileInfo*, int> Flush;
    public delegate* unmanaged<byte*, FuseFileInfo*, int> Release;
    public delegate* unmanaged<byte*, int, FuseFileInfo*, int> FSync;
    public delegate* unmanaged<byte*, byte*, byte*, nuint, int, int> SetXAttr;
    public delegate* unmanaged<byte*, byte*, byte*, nuint, int> GetXAttr;
    public delegate* unmanaged<byte*, byte*, nuint, int> ListXAttr;
    public delegate* unmanaged<byte*, byte*, int> RemoveXAttr;
    public nint OpenDir;
    public delegate* unmanaged<byte*, nint, delegate* unmanaged<nint, byte*, nint, long, int, int>, long, FuseFileInfo*, int, int> ReadDir;
    public nint ReleaseDir;
    public nint FSyncDir;
    public delegate* unmanaged<nint, nint, nint> Init;
    public nint Destroy;
    public nint Access;
    public delegate* unmanaged<byte*, uint, FuseFileInfo*, int> Create;
    public nint Lock;
    public delegate* unmanaged<byte*, nint, FuseFileInfo*, int> UTimens;
    public nint BMap;
    public nint IoCtl;
    public nint Poll;
    public nint WriteBuf;
    public delegate* unmanaged<byte*, FuseBufVec**, nuint, long, FuseFileInfo*, int> ReadBuf;
    public nint FLock;
    public delegate* unmanaged<byte*, int, long, long, FuseFileInfo*, int> FAllocate;
    public nint CopyFileRange;
    public nint LSeek;
}
