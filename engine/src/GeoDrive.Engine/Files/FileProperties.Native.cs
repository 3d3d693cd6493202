using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

public sealed partial record FileProperties
{
    /// <summary>The libc calls behind <see cref="FileProperties"/>: all on an open descriptor, so no link is followed.</summary>
    internal static partial class Native
    {
        public const int AtEmptyPath = 0x1000;
        public const uint StatxBasicStats = 0x7ff;
        public const int ENODATA = 61;
        public const int ERANGE = 34;

        /// <summary>struct statx: its layout is the same on every architecture (unlike struct stat).</summary>
        [StructLayout(LayoutKind.Explicit, Size = 256)]
        public struct Statx
        {
            [FieldOffset(20)] public uint Uid;
            [FieldOffset(24)] public uint Gid;
            [FieldOffset(28)] public ushort Mode;
            [FieldOffset(40)] public ulong Size;
            [FieldOffset(112)] public long MtimeSeconds;
            [FieldOffset(120)] public uint MtimeNanoseconds;
        }

        [StructLayout(LayoutKind.Sequential)]
        public struct Timespec
        {
            public long Seconds;
            public long Nanoseconds;
        }

        /// <summary>UTIME_OMIT: leave that time as it is.</summary>
        public const long UtimeOmit = (1L << 30) - 2;

        [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int StatxOf(SafeFileHandle dirfd, string path, int flags, uint mask, out Statx buffer);

        /// <summary>statx of a path from the working folder (AT_FDCWD), for <see cref="LocalFile.Read"/>.</summary>
        [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int StatxAt(int dirfd, string path, int flags, uint mask, out Statx buffer);

        public const int AtFdCwd = -100;
        public const int AtSymlinkNoFollow = 0x100;
        public const int ENOENT = 2;
        public const int ENOTDIR = 20;
        public const ushort FileTypeMask = 0xF000;
        public const ushort RegularFile = 0x8000;
        public const ushort Directory = 0x4000;

        [LibraryImport("libc", EntryPoint = "futimens", SetLastError = true)]
        public static partial int FUtimens(SafeFileHandle fd, [In] Timespec[] times);

        [LibraryImport("libc", EntryPoint = "fchown", SetLastError = true)]
        public static partial int FChown(SafeFileHandle fd, uint uid, uint gid);

        [LibraryImport("libc", EntryPoint = "fchmod", SetLastError = true)]
        public static partial int FChmod(SafeFileHandle fd, uint mode);

        [LibraryImport("libc", EntryPoint = "flistxattr", SetLastError = true)]
        public static partial nint FListXAttr(SafeFileHandle fd, byte[]? list, nuint size);

        [LibraryImport("libc", EntryPoint = "fgetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial nint FGetXAttr(SafeFileHandle fd, string name, byte[]? value, nuint size);

        [LibraryImport("libc", EntryPoint = "fsetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int FSetXAttr(SafeFileHandle fd, string name, byte[] value, nuint size, int flags);

        [LibraryImport("libc", EntryPoint = "fremovexattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int FRemoveXAttr(SafeFileHandle fd, string name);

        /// <summary>An attribute's value, or null when the file has none by that name.</summary>
        public static byte[]? GetAttribute(SafeFileHandle fd, string name)
        {
            while (true)
            {
                var length = FGetXAttr(fd, name, null, 0);
                if (length < 0)
                {
                    return null;
                }
                var value = new byte[length];
                var read = FGetXAttr(fd, name, value, (nuint)value.Length);
                if (read >= 0)
                {
                    return read == value.Length ? value : value[..(int)read];
                }
                if (Marshal.GetLastPInvokeError() != ERANGE)
                {
                    return null;
                }
                // Grew between the two calls: ask again.
            }
        }

        /// <summary>The names of the file's extended attributes (every namespace).</summary>
        public static List<string> AttributeNames(SafeFileHandle fd)
        {
            while (true)
            {
                var length = FListXAttr(fd, null, 0);
                if (length <= 0)
                {
                    return [];
                }
                var list = new byte[length];
                var read = FListXAttr(fd, list, (nuint)list.Length);
                if (read >= 0)
                {
                    return [.. System.Text.Encoding.UTF8.GetString(list, 0, (int)read).Split('\0', StringSplitOptions.RemoveEmptyEntries)];
                }
                if (Marshal.GetLastPInvokeError() != ERANGE)
                {
                    return [];
                }
            }
        }
    }
}
