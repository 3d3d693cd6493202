using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>What the engine compares to decide whether a local file changed: size and last write time.</summary>
public readonly record struct LocalFile(long Size, DateTimeOffset ModifiedUtc, UnixFileMode Mode)
{
    /// <summary>
    /// The file at <paramref name="localPath"/>, or null when nothing or a folder is there. A regular file is read with one
    /// statx (an upload reads its file four times); a link or a special file as .NET's <see cref="FileInfo"/> reads it.
    /// </summary>
    public static LocalFile? Read(string localPath)
    {
        if (OperatingSystem.IsLinux())
        {
            if (FileProperties.Native.StatxAt(FileProperties.Native.AtFdCwd, localPath, FileProperties.Native.AtSymlinkNoFollow,
                    FileProperties.Native.StatxBasicStats, out var stat) == 0)
            {
                switch (stat.Mode & FileProperties.Native.FileTypeMask)
                {
                    case FileProperties.Native.RegularFile:
                        return new LocalFile((long)stat.Size, new FileTime(stat.MtimeSeconds, stat.MtimeNanoseconds).ToDateTimeOffset(), (UnixFileMode)(stat.Mode & 0xFFF));
                    case FileProperties.Native.Directory:
                        return null;
                }
            }
            else if (System.Runtime.InteropServices.Marshal.GetLastPInvokeError() is FileProperties.Native.ENOENT or FileProperties.Native.ENOTDIR)
            {
                return null;
            }
        }
        return ReadAsDotNetDoes(localPath);
    }

    private static LocalFile? ReadAsDotNetDoes(string localPath)
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
    /// <param name="properties">Another version's properties to take (one that records them), else the file keeps its own.</param>
    public static List<string> MakeStub(string cacheRoot, string localPath, long size, DateTimeOffset modifiedUtc, StubMark? mark, FileProperties? properties = null)
    {
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Write);
        return MakeStub(handle, localPath, size, modifiedUtc, mark, properties);
    }

    /// <summary>As above, on a cache file already open for writing (<paramref name="localPath"/> names it in an error).</summary>
    public static List<string> MakeStub(SafeFileHandle handle, string localPath, long size, DateTimeOffset modifiedUtc, StubMark? mark, FileProperties? properties = null)
    {
        // Marked before a byte goes: a crash in between leaves a marked file with its data, never unmarked zeros.
        if (mark is not null)
        {
            StubMark.Write(handle, localPath, mark);
        }
        // The file's own time, to the nanosecond, when it is the one recorded (the index keeps 100 ns ticks).
        var exact = FileTime.Exact(modifiedUtc, FileProperties.ReadTime(handle));
        RandomAccess.SetLength(handle, 0);
        RandomAccess.SetLength(handle, size);
        var problems = properties?.ApplyTo(handle, localPath) ?? [];
        if (properties is null)
        {
            FileProperties.SetTime(handle, exact, localPath);
        }
        using var stream = new FileStream(handle, FileAccess.Write, bufferSize: 0);
        stream.Flush(flushToDisk: true);
        return problems;
    }

    /// <summary>A new stub with this mode and time only (<see cref="CreateStub(string, string, long, FileProperties, StubMark)"/>).</summary>
    public static void CreateStub(string cacheRoot, string localPath, long size, DateTimeOffset modifiedUtc, UnixFileMode mode, StubMark mark) =>
        CreateStub(cacheRoot, localPath, size, new FileProperties(mode, FileTime.From(modifiedUtc), null, [], null), mark);

    /// <summary>
    /// Makes a new stub for an object found in the bucket: a sparse file of its size with the properties its object
    /// records (mode, time, and owner, ACL and attributes where recorded). Never replaces an existing file (CreateNew),
    /// so nothing local is overwritten. Returns what of the properties could not be applied (the stub stands regardless).
    /// </summary>
    public static List<string> CreateStub(string cacheRoot, string localPath, long size, FileProperties properties, StubMark mark)
    {
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.CreateNew, FileAccess.Write, properties.Mode);
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
        return properties.ApplyTo(handle, localPath);
    }
}

/// <summary>The Linux stub: the cache file made sparse in place (<see cref="LocalFile.MakeStub"/>).</summary>
public sealed class SparseFileStubs(string cacheRoot) : Core.Ports.ILocalStubs
{
    public void MakeStub(Core.Model.FileEntry entry, string localPath) =>
        // The engine marked it already (it knows which key the stub stands for).
        LocalFile.MakeStub(cacheRoot, localPath, entry.Size, entry.ModifiedUtc, mark: null);
}
