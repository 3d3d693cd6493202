using System.Runtime.InteropServices;
using System.Text;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Mount.Fuse.Native;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.Fuse;

/// <summary>Modes, owners, times, free space, extended attributes, and who is asking.</summary>
public sealed partial class FuseMount
{
    /// <summary>The extended attribute that shows a file's state (the analogue of Windows' OFFLINE attribute).</summary>
    public const string StateAttribute = "user.geodrive.state";

    // The root's mode, owner and times are the mount folder's (MountRoot); the cache folder stays private. A file's changed
    // properties are the engine's to write into its object.
    internal int ChMod(string fusePath, uint mode) =>
        IsRoot(fusePath, out var root) ? root.ChMod(mode) : PropertyCall(fusePath, path => _cache.ChMod(path, mode));

    internal int ChOwn(string fusePath, uint uid, uint gid) =>
        IsRoot(fusePath, out var root) ? root.ChOwn(uid, gid) : PropertyCall(fusePath, path => _cache.ChOwn(path, uid, gid));

    internal int UTimens(string fusePath, nint times) =>
        IsRoot(fusePath, out var root) ? root.UTimens(times) : PropertyCall(fusePath, path => _cache.UTimens(path, times));

    /// <summary>A call that changes a file's properties: done in the cache, then told to the engine when it succeeded.</summary>
    private int PropertyCall(string fusePath, Func<string, int> call) => Guarded(fusePath, path =>
    {
        var result = call(path);
        if (result == 0)
        {
            _drive.PropertiesChanged(path, CurrentCaller());
        }
        return result;
    });

    private bool IsRoot(string? fusePath, out MountRoot root)
    {
        root = _root!;
        return fusePath is not null && Relative(fusePath).Length == 0 && _root is not null;
    }

    internal int StatFs(nint statVfs) => LibC.StatVfs(_drive.CachePath, statVfs) == 0 ? 0 : LibC.NegativeErrno();

    internal unsafe int GetXAttr(string fusePath, string name, byte* value, int size)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        if ((IsEngineAttribute(name) && name != StateAttribute) || IsCapabilityAttribute(name))
        {
            return -Errno.ENODATA;
        }
        if (name != StateAttribute)
        {
            return _cache.WithDescriptor(path, BeneathCache.ORdOnly, fd =>
            {
                var n = LibC.FGetXAttr(fd, name, (nint)value, (nuint)size);
                return n >= 0 ? (int)n : LibC.NegativeErrno();
            });
        }
        if (_drive.GetStateAttribute(path) is not { } state)
        {
            return -Errno.ENODATA;
        }
        return CopyOut(Encoding.UTF8.GetBytes(state), value, size);
    }

    internal unsafe int ListXAttr(string fusePath, byte* list, int size)
    {
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        byte[] names = [];
        var length = (nint)_cache.WithDescriptor(path, BeneathCache.ORdOnly, fd =>
        {
            var needed = LibC.FListXAttr(fd, 0, 0);
            if (needed <= 0)
            {
                return needed < 0 ? LibC.NegativeErrno() : 0;
            }
            names = new byte[(int)needed];
            fixed (byte* p = names)
            {
                var listed = LibC.FListXAttr(fd, (nint)p, (nuint)names.Length);
                return listed >= 0 ? (int)listed : LibC.NegativeErrno();
            }
        });
        if (length < 0)
        {
            return (int)length;
        }
        // The engine's own attributes on the cache file (a stub's mark) are not the application's to see.
        var all = Encoding.UTF8.GetString(names, 0, (int)length).Split('\0', StringSplitOptions.RemoveEmptyEntries)
            .Where(n => !IsEngineAttribute(n) && !IsCapabilityAttribute(n))
            .SelectMany(n => Encoding.UTF8.GetBytes(n + "\0"))
            .ToArray();
        if (_drive.GetStateAttribute(path) is not null)
        {
            all = [.. all, .. Encoding.UTF8.GetBytes(StateAttribute), 0];
        }
        return CopyOut(all, list, size);
    }

    internal int SetXAttr(string fusePath, string name, nint value, nuint size, int flags) =>
        IsEngineAttribute(name) ? -Errno.EPERM : IsCapabilityAttribute(name) ? -Errno.EOPNOTSUPP : PropertyCall(fusePath, path => _cache.WithDescriptor(path, BeneathCache.ORdOnly, fd => LibC.FSetXAttr(fd, name, value, size, flags) == 0 ? 0 : LibC.NegativeErrno()));

    internal int RemoveXAttr(string fusePath, string name) =>
        IsEngineAttribute(name) ? -Errno.EPERM : PropertyCall(fusePath, path => _cache.WithDescriptor(path, BeneathCache.ORdOnly, fd => LibC.FRemoveXAttr(fd, name) == 0 ? 0 : LibC.NegativeErrno()));

    /// <summary>
    /// File capabilities (security.capability) are not kept on a cloud drive: the mount is nosuid, under which the kernel
    /// ignores them, and no object carries them (a stub recalled would have lost them). So none is set on a cache file
    /// through the mount (setcap: "Operation not supported"), and the kernel's question before every write (whether it must
    /// drop one) is answered at once, without the round of system calls a look at the cache file costs (docs/decisions.md).
    /// </summary>
    internal static bool IsCapabilityAttribute(string name) => name == "security.capability";

    internal static bool IsCapabilityAttribute(ReadOnlySpan<byte> name) => name.SequenceEqual("security.capability"u8);

    /// <summary>user.geodrive.*: the state (read-only) and the engine's marks (hidden), never set or removed through the mount.</summary>
    private static bool IsEngineAttribute(string name) => name.StartsWith("user.geodrive.", StringComparison.Ordinal);

    /// <summary>getxattr/listxattr convention: size 0 asks for the length; too small a buffer is ERANGE.</summary>
    private static unsafe int CopyOut(byte[] bytes, byte* destination, int size)
    {
        if (size == 0)
        {
            return bytes.Length;
        }
        if (size < bytes.Length)
        {
            return -Errno.ERANGE;
        }
        Marshal.Copy(bytes, 0, (nint)destination, bytes.Length);
        return bytes.Length;
    }

    /// <summary>A call on a drive path (0 or -errno), refused for the engine's internal folder.</summary>
    private int Guarded(string fusePath, Func<string, int> call)
    {
        var path = Named(fusePath);
        return _drive.IsInternalPath(path) ? -Errno.ENOENT : call(path);
    }

    /// <summary>
    /// The process behind the current request: its id, and its image name (/proc/PID/comm) read only if the engine asks
    /// for it while answering (a policy's processExcludes, a refusal's event); pid 0 is the kernel.
    /// </summary>
    private static unsafe Caller CurrentCaller()
    {
        var context = Native.LibFuse.GetContext();
        var pid = context is null ? 0 : context->Pid;
        if (pid <= 0)
        {
            return new Caller(0, "", IsSystem: true);
        }
        return new Caller(pid, ImageNameOf);
    }

    /// <summary>
    /// /proc/PID/comm in three system calls (most requests ask it; File.ReadAllText also took and dropped a file lock
    /// around its reads), or "" when the process already exited: its id still tells the engine something.
    /// </summary>
    private static unsafe string ImageNameOf(int pid)
    {
        var descriptor = LibC.Open($"/proc/{pid}/comm", LibC.ORdOnly | LibC.OCloExec, 0);
        if (descriptor < 0)
        {
            return "";
        }
        try
        {
            // At most TASK_COMM_LEN (16) bytes with its newline.
            const int Room = 64;
            var buffer = stackalloc byte[Room];
            var length = (int)LibC.PRead(descriptor, buffer, Room, 0);
            while (length > 0 && buffer[length - 1] == (byte)'\n')
            {
                length--;
            }
            return length > 0 ? Encoding.UTF8.GetString(buffer, length) : "";
        }
        finally
        {
            LibC.Close(descriptor);
        }
    }

    /// <summary>A new file or folder stays made when its permission bits could not be set (it has the service umask's narrower ones): said in the log.</summary>
    private void WarnIfNarrowed(string path, uint mode, int kept)
    {
        if (kept < 0)
        {
            _logger.LogWarning("{Path} was made, but not with the permissions asked for ({Mode}): errno {Errno}. Set them with chmod through the mount.",
                path, Convert.ToString(mode & CacheFolder.PermissionBits, 8), -kept);
        }
    }

    /// <summary>A file or folder made through the mount belongs to the caller, as on any file system.</summary>
    private unsafe void SetOwnerToCaller(string path)
    {
        var context = Native.LibFuse.GetContext();
        if (_runningAsRoot && context is not null)
        {
            _cache.ChOwn(path, context->Uid, context->Gid);
        }
    }
}
