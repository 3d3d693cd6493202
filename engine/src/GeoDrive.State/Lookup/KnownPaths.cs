namespace GeoDrive.State.Lookup;

/// <summary>
/// Which paths the index may hold, so that asking for one it cannot hold needs no LiteDB read: every new file's
/// create asks for its name, always in vain, and that one query through LiteDB's pipeline was 7 % of the
/// service's CPU while it uploaded small files.
/// A filter is filled from the index's entries in the background; until the first one is filled every path
/// "may" be there. Every write of an entry adds its path first (to the filter in use and to one being filled),
/// so a filled filter misses no entry written before, during or after its fill. Deletes leave their bits: a
/// filter only overfills, and one that has taken more new paths than it was sized for is filled again, twice
/// as large.
/// Adds, the start of a fill and its end all run under the index's write lock; <see cref="MayHold"/> on any thread.
/// </summary>
internal sealed class KnownPaths(long smallestCapacity)
{
    private volatile PathFilter? _inUse;
    private volatile PathFilter? _filling;
    private TaskCompletionSource _fillEnded = Ended();

    /// <summary>Completes when the latest fill has ended, filled or abandoned (at once when none was started).</summary>
    public Task FillEnded => _fillEnded.Task;

    /// <summary>False only when the index certainly holds no entry at <paramref name="path"/>.</summary>
    public bool MayHold(string path) => _inUse is not { } filter || filter.MayContain(path);

    /// <summary>Before an entry at <paramref name="path"/> is written (under the write lock).</summary>
    public void Adding(string path)
    {
        _inUse?.Add(path);
        _filling?.Add(path);
    }

    /// <summary>No filter is in use yet, or the one in use is overfull, and no fill is under way.</summary>
    public bool FillDue => _filling is null && _inUse is not { Overfull: false };

    /// <summary>
    /// Under the write lock: the filter to fill now with every entry's path, when none is in use yet or the one in use
    /// is overfull and no fill is under way; null otherwise. Sized for twice <paramref name="entries"/> at least.
    /// </summary>
    public PathFilter? StartFill(long entries)
    {
        if (!FillDue)
        {
            return null;
        }
        var capacity = Math.Max(smallestCapacity, Math.Max(entries, _inUse?.Capacity ?? 0) * 2);
        _fillEnded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        return _filling = new PathFilter(capacity);
    }

    /// <summary>Under the write lock: <paramref name="filled"/> holds every entry's path now and answers from here on.</summary>
    public void Filled(PathFilter filled)
    {
        if (ReferenceEquals(_filling, filled))
        {
            _inUse = filled;
            _filling = null;
            _fillEnded.TrySetResult();
        }
    }

    /// <summary>Under the write lock: the fill of <paramref name="abandoned"/> stopped short; the next write may start another.</summary>
    public void FillAbandoned(PathFilter abandoned)
    {
        if (ReferenceEquals(_filling, abandoned))
        {
            _filling = null;
            _fillEnded.TrySetResult();
        }
    }

    private static TaskCompletionSource Ended()
    {
        var ended = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ended.SetResult();
        return ended;
    }
}
