using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// The changes a drive owes its bucket (deletes, aborts of multipart uploads), kept where the drive's
/// index is so they survive a crash. Every write is durable when the call returns. The LiteDB index
/// implements it.
/// </summary>
public interface IBucketJournal
{
    /// <summary>Adds the changes in one durable write and assigns their ids.</summary>
    void Add(IReadOnlyList<BucketChange> changes);

    /// <summary>Records a failed attempt (attempts, next attempt, last error) of a change still owed.</summary>
    void Update(BucketChange change);

    /// <summary>The change is done (or no longer owed).</summary>
    void Remove(long id);

    /// <summary>Every change still owed, oldest first.</summary>
    IReadOnlyList<BucketChange> ReadOwed();
}

/// <summary>A journal in memory, for an index that keeps none (tests of other parts): nothing survives a restart.</summary>
public sealed class InMemoryBucketJournal : IBucketJournal
{
    private readonly SortedDictionary<long, BucketChange> _changes = [];
    private readonly Lock _gate = new();
    private long _next;

    public void Add(IReadOnlyList<BucketChange> changes)
    {
        lock (_gate)
        {
            foreach (var change in changes)
            {
                change.Id = ++_next;
                _changes[change.Id] = change.Clone();
            }
        }
    }

    public void Update(BucketChange change)
    {
        lock (_gate)
        {
            if (_changes.ContainsKey(change.Id))
            {
                _changes[change.Id] = change.Clone();
            }
        }
    }

    public void Remove(long id)
    {
        lock (_gate)
        {
            _changes.Remove(id);
        }
    }

    public IReadOnlyList<BucketChange> ReadOwed()
    {
        lock (_gate)
        {
            return [.. _changes.Values.Select(c => c.Clone())];
        }
    }
}
