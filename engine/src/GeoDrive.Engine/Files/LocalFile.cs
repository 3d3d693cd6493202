using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>What the engine compares to decide whether a local file changed: size and last write time.</summary>
public readonly record struct LocalFile(long Size, DateTimeOffset ModifiedUtc, UnixFileMode Mode)
{
    public static LocalFile? Read(string localPath)
    {
        var info = new FileInfo(localPath);
        if (!info.Exists)
        {
            return null;
        }
        return new LocalFile(info.Length, new DateTimeOffset(info.LastWriteTimeUtc, TimeSpan.Zero), info.UnixFileMode);
    }

    /// <summary>
    /// Turns the file into a stub in place: same inode, owner, mode and times, the true size, and no
    /// data blocks (a sparse file). Reading it locally gives zeros, which is why only the engine decides
    /// when its data may be served.
    /// </summary>
    public static void MakeStub(string cacheRoot, string localPath, long size, DateTimeOffset modifiedUtc, StubMark? mark)
    {
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Write);
        MakeStub(handle, localPath, size, modifiedUtc, mark);
    }

    /// <summary>As above, on a cache file already open for writing (<paramref name="localPath"/> names it in an error).</summary>
    public static void MakeStub(SafeFileHandle handle, string localPath, long size, DateTimeOffset modifiedUtc, StubMark? mark)
    {
        // Marked before a byte goes: a crash in between leaves a marked file with its data, never unmarked zeros.
        if (mark is not null)
        {
            StubMark.Write(handle, localPath, mark);
        }
        RandomAccess.SetLength(handle, 0);
        RandomAccess.SetLength(handle, size);
        File.SetLastWriteTimeUtc(handle, modifiedUtc.UtcDateTime);
        using var stream = new FileStream(handle, FileAccess.Write, bufferSize: 0);
        stream.Flush(flushToDisk: true);
    }

    /// <summary>
    /// Makes a new stub for an object found in the bucket: a sparse file of its size with its recorded
    /// time and mode. Never replaces an existing file (CreateNew), so nothing local is overwritten.
    /// </summary>
    public static void CreateStub(string cacheRoot, string localPath, long size, DateTimeOffset modifiedUtc, UnixFileMode mode, StubMark mark)
    {
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.CreateNew, FileAccess.Write, mode);
        try
        {
            StubMark.Write(handle, localPath, mark);
        }
        catch
        {
            // Never left behind unmarked: an empty file without its mark would be taken for data.
            File.Delete(localPath);
            throw;
        }
        RandomAccess.SetLength(handle, size);
        File.SetLastWriteTimeUtc(handle, modifiedUtc.UtcDateTime);
    }
}

/// <summary>The Linux stub: the cache file made sparse in place (<see cref="LocalFile.MakeStub"/>).</summary>
public sealed class SparseFileStubs(string cacheRoot) : Core.Ports.ILocalStubs
{
    public void MakeStub(Core.Model.FileEntry entry, string localPath) =>
        // The engine marked it already (it knows which key the stub stands for).
        LocalFile.MakeStub(cacheRoot, localPath, entry.Size, entry.ModifiedUtc, mark: null);
}
