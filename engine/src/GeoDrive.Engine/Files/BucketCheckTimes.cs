using System.Collections.Concurrent;

namespace GeoDrive.Engine.Files;

/// <summary>
/// When each folder or path was last compared with the bucket, so that updateWait gates how often the
/// bucket is asked. Kept in memory only: after a restart everything is stale and is asked once more.
/// Entries older than the wait are dropped when the table grows, so it stays bounded by the paths
/// touched within one updateWait.
/// </summary>
internal sealed class BucketCheckTimes
{
    private const int PruneAbove = 50_000;

    private readonly ConcurrentDictionary<string, DateTimeOffset> _checked = new(StringComparer.Ordinal);
    private int _pruneAt = PruneAbove;

    /// <summary>True when the path was checked less than <paramref name="updateWait"/> ago (never when the wait is 0).</summary>
    public bool IsFresh(string path, DateTimeOffset now, TimeSpan updateWait) =>
        _checked.TryGetValue(path, out var at) && at + updateWait > now;

    public void Mark(string path, DateTimeOffset now, TimeSpan updateWait)
    {
        _checked[path] = now;
        if (_checked.Count <= Volatile.Read(ref _pruneAt))
        {
            return;
        }
        foreach (var (key, at) in _checked)
        {
            if (at + updateWait <= now)
            {
                _checked.TryRemove(KeyValuePair.Create(key, at));
            }
        }
        // Still large: everything is fresh. Prune again only after it doubled, so a scan stays linear.
        Volatile.Write(ref _pruneAt, Math.Max(PruneAbove, _checked.Count * 2));
    }

    /// <summary>Makes the path stale, so the next question asks the bucket again.</summary>
    public void Forget(string path) => _checked.TryRemove(path, out _);
}
