using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.TestSupport;

/// <summary>
/// What the kernel's page cache holds of a file, by cachestat(2) (Linux 6.5 and later): a dirty page, or one still being
/// written back, is not on the disk yet, and a power cut loses it.
/// </summary>
public static partial class PageCache
{
    // cachestat is in the generic syscall table: the same number on x86-64 and arm64.
    private const long CachestatSyscall = 451;

    [StructLayout(LayoutKind.Sequential)]
    private struct CachestatRange
    {
        public ulong Offset;
        public ulong Length; // 0: to the end of the file
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Cachestat
    {
        public ulong Cached;
        public ulong Dirty;
        public ulong Writeback;
        public ulong Evicted;
        public ulong RecentlyEvicted;
    }

    /// <summary>The file's pages in the page cache that are not on the disk yet (dirty, or under writeback).</summary>
    public static long PagesNotOnDisk(string path)
    {
        using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        var stat = Of(handle);
        return (long)(stat.Dirty + stat.Writeback);
    }

    /// <summary>The pages of the file open as <paramref name="handle"/> that its file system's page cache holds (a FUSE mount's own, for a handle opened through one).</summary>
    public static long PagesCached(SafeFileHandle handle) => (long)Of(handle).Cached;

    private static Cachestat Of(SafeFileHandle handle)
    {
        var range = default(CachestatRange);
        var stat = default(Cachestat);
        if (Syscall(CachestatSyscall, handle.DangerousGetHandle(), ref range, ref stat, 0) != 0)
        {
            throw new IOException($"cachestat failed: errno {Marshal.GetLastPInvokeError()}");
        }
        return stat;
    }

    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static partial long Syscall(long number, nint fd, ref CachestatRange range, ref Cachestat stat, uint flags);
}
