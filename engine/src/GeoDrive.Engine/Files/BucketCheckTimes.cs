using System.IO.Hashing;
using System.Runtime.InteropServices;

namespace GeoDrive.Engine.Files;

/// <summary>
/// When each folder or path was last compared with the bucket, so that updateWait gates how often the
/// bucket is asked. Kept in memory only: after a restart everything is stale and is asked once more.
/// Entries older than the wait are dropped when the table grows, so it stays bounded by the paths
/// touched within one updateWait.
/// </summary>
/// <remarks>
/// A path is kept as a 64-bit hash of its name with the time in ticks: 100,000 paths took 4.2 MiB (44 bytes each, with
/// the table's slack) where string keys in a concurrent dictionary took 12.2 MiB, and a 100,000-file upload within one
/// updateWait holds that many. Two paths of one hash share a time: one may be taken as checked within updateWait when
/// the other was, which is the staleness updateWait allows anyway, and a forget makes both stale, which costs one more
/// look.
/// </remarks>
internal sealed class BucketCheckTimes
{
    private const int PruneAbove = 50_000;

    private readonly Lock _gate = new();
    private readonly Dictionary<ulong, long> _checked = [];
    private int _pruneAt = PruneAbove;

    /// <summary>True when the path was checked less than <paramref name="updateWait"/> ago (never when the wait is 0).</summary>
    public bool IsFresh(string path, DateTimeOffset now, TimeSpan updateWait)
    {
        lock (_gate)
        {
            return _checked.TryGetValue(Key(path), out var at) && at + updateWait.Ticks > now.UtcTicks;
        }
    }

    public void Mark(string path, DateTimeOffset now, TimeSpan updateWait)
    {
        lock (_gate)
        {
            _checked[Key(path)] = now.UtcTicks;
            if (_checked.Count <= _pruneAt)
            {
                return;
            }
            foreach (var (key, at) in _checked)
            {
                if (at + updateWait.Ticks <= now.UtcTicks)
                {
                    _checked.Remove(key);
                }
            }
            // Still large: everything is fresh. Prune again only after it doubled, so a scan stays linear.
            _pruneAt = Math.Max(PruneAbove, _checked.Count * 2);
            if (_checked.Count < _checked.EnsureCapacity(0) / 4)
            {
                _checked.TrimExcess();
            }
        }
    }

    /// <summary>Makes the path stale, so the next question asks the bucket again.</summary>
    public void Forget(string path)
    {
        lock (_gate)
        {
            _checked.Remove(Key(path));
        }
    }

    /// <summary>How many paths are held (tests).</summary>
    internal int Count
    {
        get
        {
            lock (_gate)
            {
                return _checked.Count;
            }
        }
    }

    private static ulong Key(string path) => XxHash3.HashToUInt64(MemoryMarshal.AsBytes(path.AsSpan()));
}
