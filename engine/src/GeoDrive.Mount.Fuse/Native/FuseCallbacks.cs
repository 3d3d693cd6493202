using System.Runtime.InteropServices;
using System.Text;

namespace GeoDrive.Mount.Fuse.Native;

/// <summary>
/// The entry points libfuse calls, on its own threads. Each finds its mount through the request's
/// context (private_data), decodes the path and hands over to the mount; nothing may throw back into
/// native code, so every failure becomes an errno here.
/// </summary>
internal static unsafe class FuseCallbacks
{
    private static readonly UTF8Encoding StrictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    public static FuseOperations Table() => new()
    {
        GetAttr = &GetAttr,
        MkDir = &MkDir,
        Unlink = &Unlink,
        RmDir = &RmDir,
        Symlink = &Symlink,
        Rename = &Rename,
        Link = &Link,
        ChMod = &ChMod,
        ChOwn = &ChOwn,
        Truncate = &Truncate,
        Open = &Open,
        ReadBuf = &ReadBuf,
        Write = &Write,
        StatFs = &StatFs,
        Flush = &Flush,
        Release = &Release,
        FSync = &FSync,
        SetXAttr = &SetXAttr,
        GetXAttr = &GetXAttr,
        ListXAttr = &ListXAttr,
        RemoveXAttr = &RemoveXAttr,
        ReadDir = &ReadDir,
        Create = &Create,
        UTimens = &UTimens,
        FAllocate = &FAllocate,
        Init = &Init,
    };

    // struct fuse_config (fuse.h): six 4-byte ids and flags, three doubles, intr, intr_signal, remember, then hard_remove.
    private const int HardRemoveOffset = 60;

    // struct fuse_conn_info (fuse_common.h): proto_major, proto_minor, max_write, max_read, max_readahead, capable, want.
    private const int CapableOffset = 20;
    private const int WantOffset = 24;
    private const uint CapAtomicOpenTruncate = 1 << 3;
    private const uint CapSpliceWrite = 1 << 7;

    /// <summary>
    /// hard_remove: unlink is passed on at once, with no ".fuse_hidden" renames that would reach the
    /// bucket. What init returns becomes the private data of every later request: the mount itself.
    /// </summary>
    [UnmanagedCallersOnly]
    private static nint Init(nint connection, nint config)
    {
        *(int*)(config + HardRemoveOffset) = 1;
        // O_TRUNC arrives with the open itself, so a stub opened to be overwritten is not recalled first.
        if ((*(uint*)(connection + CapableOffset) & CapAtomicOpenTruncate) != 0)
        {
            *(uint*)(connection + WantOffset) |= CapAtomicOpenTruncate;
        }
        // A read answered with the cache file's descriptor goes from the page cache to /dev/fuse by splice (ReadBuf).
        if ((*(uint*)(connection + CapableOffset) & CapSpliceWrite) != 0)
        {
            *(uint*)(connection + WantOffset) |= CapSpliceWrite;
        }
        var context = LibFuse.GetContext();
        // Reads of local files served by the kernel from the cache file (FUSE passthrough): libfuse 3.17+ sets backing_id.
        if ((*(uint*)(connection + CapableOffset) & Passthrough.Capability) != 0 && LibFuse.Version() >= Passthrough.FirstLibraryVersion &&
            context is not null && GCHandle.FromIntPtr(context->PrivateData).Target is FuseMount mount)
        {
            *(uint*)(connection + WantOffset) |= Passthrough.Capability;
            mount.PassthroughNegotiated();
        }
        return context is null ? 0 : context->PrivateData;
    }

    [UnmanagedCallersOnly]
    private static int GetAttr(byte* path, nint stat, FuseFileInfo* fi) =>
        Dispatch(path, (m, p) => m.GetAttr(p, stat, HandleOf(fi)), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int MkDir(byte* path, uint mode) => Dispatch(path, (m, p) => m.MkDir(p!, mode));

    [UnmanagedCallersOnly]
    private static int Unlink(byte* path) => Dispatch(path, (m, p) => m.Unlink(p!));

    [UnmanagedCallersOnly]
    private static int RmDir(byte* path) => Dispatch(path, (m, p) => m.RmDir(p!));

    // Links would give one file two names and two objects; refused in v1 (docs/decisions.md).
    [UnmanagedCallersOnly]
    private static int Symlink(byte* target, byte* path) => -Errno.EPERM;

    [UnmanagedCallersOnly]
    private static int Link(byte* oldPath, byte* newPath) => -Errno.EPERM;

    [UnmanagedCallersOnly]
    private static int Rename(byte* from, byte* to, uint flags)
    {
        if (!TryDecode(to, out var target))
        {
            return -Errno.EILSEQ;
        }
        return Dispatch(from, (m, p) => m.Rename(p!, target!, flags));
    }

    [UnmanagedCallersOnly]
    private static int ChMod(byte* path, uint mode, FuseFileInfo* fi) => Dispatch(path, (m, p) => m.ChMod(p!, mode));

    [UnmanagedCallersOnly]
    private static int ChOwn(byte* path, uint uid, uint gid, FuseFileInfo* fi) => Dispatch(path, (m, p) => m.ChOwn(p!, uid, gid));

    [UnmanagedCallersOnly]
    private static int Truncate(byte* path, long size, FuseFileInfo* fi) =>
        Dispatch(path, (m, p) => m.Truncate(p, size, HandleOf(fi)), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int FAllocate(byte* path, int mode, long offset, long length, FuseFileInfo* fi) =>
        Dispatch(path, (m, _) => m.Allocate(HandleOf(fi), mode, offset, length), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int Open(byte* path, FuseFileInfo* fi) => Dispatch(path, (m, p) =>
    {
        var result = m.Open(p!, fi->Flags, out var answer);
        Answer(fi, answer);
        return result;
    });

    [UnmanagedCallersOnly]
    private static int Create(byte* path, uint mode, FuseFileInfo* fi) => Dispatch(path, (m, p) =>
    {
        var result = m.Create(p!, mode, fi->Flags, out var answer);
        Answer(fi, answer);
        return result;
    });

    /// <summary>
    /// An open's answer: our handle, no flush at close, uncached (direct_io: a write-only handle, or a writer's while the
    /// file passes through), and for a passthrough mode the backing file (only ever chosen with libfuse 3.17+, whose
    /// fuse_file_info has backing_id).
    /// </summary>
    private static void Answer(FuseFileInfo* fi, OpenAnswer answer)
    {
        fi->FileHandle = answer.Handle;
        if (answer.NoFlush)
        {
            fi->BitFields |= FuseFileInfo.NoFlush;
        }
        if (answer.Uncached)
        {
            fi->BitFields |= FuseFileInfo.DirectIo;
        }
        if (answer.Mode != OpenMode.Served)
        {
            fi->BackingId = answer.BackingId;
        }
    }

    [UnmanagedCallersOnly]
    private static int ReadBuf(byte* path, FuseBufVec** answer, nuint size, long offset, FuseFileInfo* fi) =>
        Dispatch(null, (m, _) => m.ReadBuf(HandleOf(fi), answer, (int)size, offset), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int Write(byte* path, byte* buffer, nuint size, long offset, FuseFileInfo* fi) =>
        Dispatch(null, (m, _) => m.Write(HandleOf(fi), buffer, (int)size, offset), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int StatFs(byte* path, nint statVfs) => Dispatch(null, (m, _) => m.StatFs(statVfs), nullPathAllowed: true);

    // close(2) waits for flush (release comes after close returned), so sync mode uploads here.
    [UnmanagedCallersOnly]
    private static int Flush(byte* path, FuseFileInfo* fi) =>
        Dispatch(path, (m, p) => m.Flush(HandleOf(fi)), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int Release(byte* path, FuseFileInfo* fi) =>
        Dispatch(path, (m, p) => m.Release(p, HandleOf(fi)), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int FSync(byte* path, int dataOnly, FuseFileInfo* fi) =>
        Dispatch(null, (m, _) => m.FSync(HandleOf(fi), dataOnly != 0), nullPathAllowed: true);

    [UnmanagedCallersOnly]
    private static int SetXAttr(byte* path, byte* name, byte* value, nuint size, int flags)
    {
        var attribute = Marshal.PtrToStringUTF8((nint)name) ?? "";
        return Dispatch(path, (m, p) => m.SetXAttr(p!, attribute, (nint)value, size, flags));
    }

    [UnmanagedCallersOnly]
    private static int GetXAttr(byte* path, byte* name, byte* value, nuint size)
    {
        if (FuseMount.IsCapabilityAttribute(MemoryMarshal.CreateReadOnlySpanFromNullTerminated(name)))
        {
            // Asked by the kernel before every write: answered without a path, a lookup or the cache file.
            return -Errno.ENODATA;
        }
        var attribute = Marshal.PtrToStringUTF8((nint)name) ?? "";
        return Dispatch(path, (m, p) => m.GetXAttr(p!, attribute, value, (int)size));
    }

    [UnmanagedCallersOnly]
    private static int ListXAttr(byte* path, byte* list, nuint size) => Dispatch(path, (m, p) => m.ListXAttr(p!, list, (int)size));

    [UnmanagedCallersOnly]
    private static int RemoveXAttr(byte* path, byte* name)
    {
        var attribute = Marshal.PtrToStringUTF8((nint)name) ?? "";
        return Dispatch(path, (m, p) => m.RemoveXAttr(p!, attribute));
    }

    [UnmanagedCallersOnly]
    private static int ReadDir(byte* path, nint buffer, delegate* unmanaged<nint, byte*, nint, long, int, int> filler, long offset, FuseFileInfo* fi, int flags) =>
        Dispatch(path, (m, p) => m.ReadDir(p!, name => AddEntry(filler, buffer, name)));

    [UnmanagedCallersOnly]
    private static int UTimens(byte* path, nint times, FuseFileInfo* fi) => Dispatch(path, (m, p) => m.UTimens(p!, times));

    /// <summary>Adds one name to a readdir buffer; false when the buffer is full.</summary>
    private static bool AddEntry(delegate* unmanaged<nint, byte*, nint, long, int, int> filler, nint buffer, string name)
    {
        var length = Encoding.UTF8.GetByteCount(name);
        Span<byte> bytes = length < 1024 ? stackalloc byte[length + 1] : new byte[length + 1];
        Encoding.UTF8.GetBytes(name, bytes);
        bytes[length] = 0;
        fixed (byte* p = bytes)
        {
            return filler(buffer, p, 0, 0, 0) == 0;
        }
    }

    private static ulong HandleOf(FuseFileInfo* fi) => fi is null ? 0 : fi->FileHandle;

    private static int Dispatch(byte* rawPath, Func<FuseMount, string?, int> operation, bool nullPathAllowed = false)
    {
        FuseMount? mount = null;
        string? path = null;
        try
        {
            mount = FuseMount.FromContext();
            if (mount is null)
            {
                return -Errno.EIO;
            }
            if (rawPath is null)
            {
                if (!nullPathAllowed)
                {
                    return -Errno.EINVAL;
                }
            }
            else if (!TryDecode(rawPath, out path))
            {
                return -Errno.EILSEQ;
            }
            return operation(mount, path);
        }
        catch (Exception ex)
        {
            return mount?.Fail(path, ex) ?? -Errno.EIO;
        }
    }

    /// <summary>FUSE paths are absolute ("/a/b"); names that are not UTF-8 cannot become object keys and are refused.</summary>
    private static bool TryDecode(byte* raw, out string? path)
    {
        path = null;
        if (raw is null)
        {
            return true;
        }
        var span = MemoryMarshal.CreateReadOnlySpanFromNullTerminated(raw);
        try
        {
            path = StrictUtf8.GetString(span);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
    }
}
