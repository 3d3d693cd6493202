using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.State;

namespace GeoDrive.TestSupport;

/// <summary>
/// The real LiteDB index and journal with hooks before an entry is written or deleted: forces an interleaving (another
/// engine call between a file's delete being journaled and its entry going) that real timing hits only rarely, or
/// catches the moment an entry is written. Tests that use it say so in their names.
/// </summary>
public sealed class HookedIndex(LiteDbFileIndex inner) : IFileIndex, IBucketJournal
{
    /// <summary>Called with the path before the inner index deletes its entry.</summary>
    public Action<string>? BeforeDelete { get; set; }

    /// <summary>Called with the entry before the inner index writes it (at once or deferred).</summary>
    public Action<FileEntry>? BeforePut { get; set; }

    private readonly List<(string Path, FileState State, bool Durable)> _written = [];

    /// <summary>Every entry written so far, in order: its path, its state, and whether its caller waited for the disk.</summary>
    public IReadOnlyList<(string Path, FileState State, bool Durable)> Written
    {
        get
        {
            lock (_written)
            {
                return [.. _written];
            }
        }
    }

    /// <summary>
    /// From now on deferred puts reach only this object (every read here sees them), never the index on disk, as a kill -9
    /// within their 20 ms would have it: a restart (a new HookedIndex) finds the file index without them. A durable put
    /// of a path writes it, and its lost deferred put is then moot. (Listings and renames do not see them: for tests of
    /// one file's states.)
    /// </summary>
    public bool LoseDeferredWrites { get; set; }

    private readonly Dictionary<string, FileEntry> _lost = new(StringComparer.Ordinal);

    public FileEntry? Get(string path)
    {
        lock (_lost)
        {
            if (_lost.TryGetValue(path, out var lost))
            {
                return lost.Clone();
            }
        }
        return inner.Get(path);
    }

    public void Put(FileEntry entry)
    {
        BeforePut?.Invoke(entry);
        Note(entry, durable: true);
        lock (_lost)
        {
            _lost.Remove(entry.Path);
        }
        inner.Put(entry);
    }

    public void PutDeferred(FileEntry entry)
    {
        BeforePut?.Invoke(entry);
        Note(entry, durable: false);
        if (LoseDeferredWrites)
        {
            lock (_lost)
            {
                _lost[entry.Path] = entry.Clone();
            }
            return;
        }
        inner.PutDeferred(entry);
    }

    private void Note(FileEntry entry, bool durable)
    {
        lock (_written)
        {
            _written.Add((entry.Path, entry.State, durable));
        }
    }

    public bool Delete(string path)
    {
        BeforeDelete?.Invoke(path);
        lock (_lost)
        {
            _lost.Remove(path);
        }
        return inner.Delete(path);
    }

    /// <summary>Called with both names before the inner index renames (the rename's path locks held).</summary>
    public Action<string, string>? BeforeRename { get; set; }

    public int Rename(string oldPath, string newPath)
    {
        BeforeRename?.Invoke(oldPath, newPath);
        return inner.Rename(oldPath, newPath);
    }

    public IReadOnlyList<FileEntry> FindByState(FileState state, int limit = int.MaxValue) => inner.FindByState(state, limit);

    public void VisitByState(FileState state, Action<FileEntry> visit) => inner.VisitByState(state, visit);

    public IEnumerable<FileEntry> All() => inner.All();

    public IEnumerable<FileEntry> Under(string folderPath) => inner.Under(folderPath);

    public long Count() => inner.Count();

    public IReadOnlyDictionary<FileState, long> CountByState() => inner.CountByState();

    public void AppendEvent(DriveEvent driveEvent) => inner.AppendEvent(driveEvent);

    public IReadOnlyList<DriveEvent> ReadEvents(DateTimeOffset? sinceUtc = null, DriveEventKind? kind = null, int limit = 1000) =>
        inner.ReadEvents(sinceUtc, kind, limit);

    public void Add(IReadOnlyList<BucketChange> changes) => inner.Add(changes);

    public void Update(BucketChange change) => inner.Update(change);

    public void Remove(long id) => inner.Remove(id);

    public IReadOnlyList<BucketChange> ReadOwed() => inner.ReadOwed();

    /// <summary>The inner index is the rig's to dispose.</summary>
    public void Dispose()
    {
    }
}
