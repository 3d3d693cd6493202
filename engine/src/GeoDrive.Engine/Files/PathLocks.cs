namespace GeoDrive.Engine.Files;

/// <summary>
/// One async lock per path, created on demand and dropped when nobody holds or waits for it, so that
/// upload, stub and recall of the same file never interleave while different files run in parallel.
/// </summary>
internal sealed class PathLocks
{
    private readonly Dictionary<string, Entry> _locks = new(StringComparer.Ordinal);

    public async Task<IDisposable> AcquireAsync(string path, CancellationToken cancellationToken = default)
    {
        Entry entry;
        lock (_locks)
        {
            if (!_locks.TryGetValue(path, out entry!))
            {
                entry = new Entry();
                _locks[path] = entry;
            }
            entry.References++;
        }
        try
        {
            await entry.Semaphore.WaitAsync(cancellationToken);
        }
        catch
        {
            Release(path, entry, held: false);
            throw;
        }
        return new Releaser(this, path, entry);
    }

    private void Release(string path, Entry entry, bool held)
    {
        if (held)
        {
            entry.Semaphore.Release();
        }
        lock (_locks)
        {
            if (--entry.References == 0)
            {
                _locks.Remove(path);
                entry.Semaphore.Dispose();
            }
        }
    }

    private sealed class Entry
    {
        public SemaphoreSlim Semaphore { get; } = new(1, 1);
        public int References { get; set; }
    }

    private sealed class Releaser(PathLocks owner, string path, Entry entry) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                owner.Release(path, entry, held: true);
            }
        }
    }
}
