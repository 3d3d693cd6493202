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

    public FileEntry? Get(string path) => inner.Get(path);

    public void Put(FileEntry entry)
    {
        BeforePut?.Invoke(entry);
        Note(entry, durable: true);
        inner.Put(entry);
    }

    public void PutDeferred(FileEntry entry)
    {
        BeforePut?.Invoke(entry);
        Note(entry, durable: false);
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
