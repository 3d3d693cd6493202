using System.Runtime.InteropServices;

namespace GeoDrive.Engine.Files;

/// <summary>
/// User and group names for numeric ids and back, through the C library (so NSS sources such as LDAP count). A file's
/// owner travels by name as well as by id, and on another host the name wins when it is known there, as tar does.
/// </summary>
public static partial class Owners
{
    // getpwuid and friends return static storage: one caller at a time.
    private static readonly Lock Gate = new();

    public static string? UserName(uint uid)
    {
        lock (Gate)
        {
            var entry = Native.GetPwUid(uid);
            return entry == 0 ? null : Marshal.PtrToStringUTF8(Marshal.ReadIntPtr(entry));
        }
    }

    public static string? GroupName(uint gid)
    {
        lock (Gate)
        {
            var entry = Native.GetGrGid(gid);
            return entry == 0 ? null : Marshal.PtrToStringUTF8(Marshal.ReadIntPtr(entry));
        }
    }

    /// <summary>The id of a user name on this host, or null. struct passwd: name, password, then uid (both 64-bit layouts).</summary>
    public static uint? UserId(string name)
    {
        lock (Gate)
        {
            var entry = Native.GetPwNam(name);
            return entry == 0 ? null : (uint)Marshal.ReadInt32(entry, 2 * IntPtr.Size);
        }
    }

    /// <summary>The id of a group name on this host, or null. struct group: name, password, then gid.</summary>
    public static uint? GroupId(string name)
    {
        lock (Gate)
        {
            var entry = Native.GetGrNam(name);
            return entry == 0 ? null : (uint)Marshal.ReadInt32(entry, 2 * IntPtr.Size);
        }
    }

    private static partial class Native
    {
        [LibraryImport("libc", EntryPoint = "getpwuid")]
        public static partial nint GetPwUid(uint uid);

        [LibraryImport("libc", EntryPoint = "getgrgid")]
        public static partial nint GetGrGid(uint gid);

        [LibraryImport("libc", EntryPoint = "getpwnam", StringMarshalling = StringMarshalling.Utf8)]
        public static partial nint GetPwNam(string name);

        [LibraryImport("libc", EntryPoint = "getgrnam", StringMarshalling = StringMarshalling.Utf8)]
        public static partial nint GetGrNam(string name);
    }
}
