using System.Runtime.InteropServices;
using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>
/// Whether a cache file holds any data at all, asked of the file system (lseek SEEK_DATA), not of its block count: a
/// stub's blocks may be its extended attributes' (a stub with a mark, an ACL and attributes takes one 4 KiB block on
/// ext4), while a byte written into it always makes a data extent.
/// </summary>
public static partial class SparseData
{
    private const int SeekData = 3;
    private const int ENXIO = 6;

    /// <summary>
    /// False only when the file system says the file has no data anywhere (every byte a hole); true when it has some, or
    /// when the file system cannot say (then every file counts as holding data, as it did before this was asked).
    /// </summary>
    public static bool Holds(string cacheRoot, string localPath)
    {
        if (!OperatingSystem.IsLinux())
        {
            return true;
        }
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Read);
        return Holds(handle);
    }

    public static bool Holds(SafeFileHandle handle) =>
        !OperatingSystem.IsLinux() || LSeek(handle, 0, SeekData) >= 0 || Marshal.GetLastPInvokeError() != ENXIO;

    [LibraryImport("libc", EntryPoint = "lseek", SetLastError = true)]
    private static partial long LSeek(SafeFileHandle fd, long offset, int whence);
}
