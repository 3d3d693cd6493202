using System.Runtime.InteropServices;
using System.Text;
using GeoDrive.Core.Model;
using GeoDrive.Mount.Fuse.Native;

namespace GeoDrive.Mount.Fuse;

/// <summary>Modes, owners, times, free space, extended attributes, and who is asking.</summary>
public sealed partial class FuseMount
{
    /// <summary>The extended attribute that shows a file's state (the analogue of Windows' OFFLINE attribute).</summary>
    public const string StateAttribute = "user.geodrive.state";

    // The root's mode, owner and times are the mount folder's (MountRoot); the cache folder stays private.
    internal int ChMod(string fusePath, uint mode) =>
        IsRoot(fusePath, out var root) ? root.ChMod(mode) : Guarded(fusePath, local => LibC.ChMod(local, mode));

    internal int ChOwn(string fusePath, uint uid, uint gid) =>
        IsRoot(fusePath, out var root) ? root.ChOwn(uid, gid) : Guarded(fusePath, local => LibC.LChOwn(local, uid, gid));

    internal int UTimens(string fusePath, nint times) =>
        IsRoot(fusePath, out var root) ? root.UTimens(times) : Guarded(fusePath, local => LibC.UTimensAt(LibC.AtFdCwd, local, times, LibC.AtSymlinkNoFollow));

    private bool IsRoot(string? fusePath, out MountRoot root)
    {
        root = _root!;
        return fusePath is not null && Relative(fusePath).Length == 0 && _root is not null;
    }

    internal int StatFs(nint statVfs) => LibC.StatVfs(_drive.CachePath, statVfs) == 0 ? 0 : LibC.NegativeErrno();

    internal unsafe int GetXAttr(string fusePath, string name, byte* value, int size)
    {
        var path = Relative(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        if (IsEngineAttribute(name) && name != StateAttribute)
        {
            return -Errno.ENODATA;
        }
        if (name != StateAttribute)
        {
            var n = LibC.LGetXAttr(Local(path), name, (nint)value, (nuint)size);
            return n >= 0 ? (int)n : LibC.NegativeErrno();
        }
        if (_drive.GetStateAttribute(path) is not { } state)
        {
            return -Errno.ENODATA;
        }
        return CopyOut(Encoding.UTF8.GetBytes(state), value, size);
    }

    internal unsafe int ListXAttr(string fusePath, byte* list, int size)
    {
        var path = Relative(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        var local = Local(path);
        var length = LibC.LListXAttr(local, 0, 0);
        if (length < 0)
        {
            return LibC.NegativeErrno();
        }
        var names = new byte[(int)length];
        fixed (byte* p = names)
        {
            length = names.Length == 0 ? 0 : LibC.LListXAttr(local, (nint)p, (nuint)names.Length);
        }
        if (length < 0)
        {
            return LibC.NegativeErrno();
        }
        // The engine's own attributes on the cache file (a stub's mark) are not the application's to see.
        var all = Encoding.UTF8.GetString(names, 0, (int)length).Split('\0', StringSplitOptions.RemoveEmptyEntries)
            .Where(n => !IsEngineAttribute(n))
            .SelectMany(n => Encoding.UTF8.GetBytes(n + "\0"))
            .ToArray();
        if (_drive.GetStateAttribute(path) is not null)
        {
            all = [.. all, .. Encoding.UTF8.GetBytes(StateAttribute), 0];
        }
        return CopyOut(all, list, size);
    }

    internal int SetXAttr(string fusePath, string name, nint value, nuint size, int flags) =>
        IsEngineAttribute(name) ? -Errno.EPERM : Guarded(fusePath, local => LibC.LSetXAttr(local, name, value, size, flags));

    internal int RemoveXAttr(string fusePath, string name) =>
        IsEngineAttribute(name) ? -Errno.EPERM : Guarded(fusePath, local => LibC.LRemoveXAttr(local, name));

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

    private int Guarded(string fusePath, Func<string, int> call)
    {
        var path = Relative(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        return call(Local(path)) == 0 ? 0 : LibC.NegativeErrno();
    }

    /// <summary>The process behind the current request: its id and image name (/proc/PID/comm); pid 0 is the kernel.</summary>
    private static unsafe Caller CurrentCaller()
    {
        var context = Native.LibFuse.GetContext();
        var pid = context is null ? 0 : context->Pid;
        if (pid <= 0)
        {
            return new Caller(0, "", IsSystem: true);
        }
        try
        {
            return new Caller(pid, File.ReadAllText($"/proc/{pid}/comm").TrimEnd('\n'));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // The process already exited; its id still tells the engine something.
            return new Caller(pid, "");
        }
    }

    /// <summary>A file or folder made through the mount belongs to the caller, as on any file system.</summary>
    private unsafe void SetOwnerToCaller(string local)
    {
        var context = Native.LibFuse.GetContext();
        if (_runningAsRoot && context is not null)
        {
            LibC.LChOwn(local, context->Uid, context->Gid);
        }
    }
}
