using GeoDrive.Core.Errors;

namespace GeoDrive.State.Storage;

/// <summary>
/// "&lt;index&gt;.lock", held open with FileShare.None for the index's lifetime. LiteDB 5 opens its data
/// file with FileShare.Read, which .NET on Linux turns into a shared flock, so a second process could
/// open (and recover the log of) a live index; FileShare.None becomes an exclusive flock (LOCK_EX|LOCK_NB)
/// on Unix and a sharing violation on Windows. The kernel drops it when the process dies, even on kill -9.
/// </summary>
internal sealed class IndexLockFile : IDisposable
{
    private readonly FileStream _stream;

    private IndexLockFile(FileStream stream) => _stream = stream;

    public static IndexLockFile Acquire(string databasePath)
    {
        var lockPath = databasePath + ".lock";
        try
        {
            var stream = new FileStream(lockPath, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, bufferSize: 1, FileOptions.None);
            return new IndexLockFile(stream);
        }
        catch (IOException ex)
        {
            // Other I/O failures (permissions) surface as UnauthorizedAccessException; an IOException here is the lock.
            throw new GeoDriveException(
                ErrorIds.CachePathInUse,
                ErrorKind.ResourceUnavailable,
                $"The cache is in use by another GeoDrive service: the index '{databasePath}' is locked.",
                "Stop the other GeoDrive service that uses this cache, or choose another cache path.",
                ex);
        }
    }

    // The file is left in place: deleting a lock file while others may be opening it lets two holders
    // lock two different inodes.
    public void Dispose() => _stream.Dispose();
}
