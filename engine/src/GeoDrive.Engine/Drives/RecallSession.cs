using GeoDrive.Core.Model;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// One file's recall in flight: its byte ranges (one per multipart part), how much of each has
/// reached the cache file, and the readers waiting for a range. Ranges are handed to the workers
/// from the position the latest reader asked for, so what an application reads comes first. The
/// range map is front-end neutral: FUSE reads and ProjFS data requests can both await it.
/// </summary>
internal sealed class RecallSession
{
    private readonly Lock _gate = new();
    private readonly long[] _present;
    private readonly bool[] _taken;
    private readonly List<Waiter> _waiters = [];
    private readonly TaskCompletionSource _data = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _progress = new(0, 1);
    private int _nextHint;
    private int _contiguous;
    private Exception? _failure;

    public RecallSession(FileEntry entry, string key, long rangeSize, CancellationToken stopping)
    {
        Started = System.Diagnostics.Stopwatch.GetTimestamp();
        Path = entry.Path;
        Key = key;
        Size = entry.Size;
        ExpectedChecksum = entry.Checksum;
        ExpectedXxh128 = entry.Checksum is null ? null : entry.Xxh128;
        Version = new ObjectVersion(entry.ETag, entry.VersionId);
        RangeSize = Math.Max(1, rangeSize);
        RangeCount = Size <= RangeSize ? 1 : (int)((Size + RangeSize - 1) / RangeSize);
        _present = new long[RangeCount];
        _taken = new bool[RangeCount];
        Cancellation = new CancellationTokenSource();
        // Not a linked source: its registration on the engine's token is dropped when the recall ends.
        _stopping = stopping.Register(Cancellation.Cancel);
    }

    private readonly CancellationTokenRegistration _stopping;

    /// <summary>When the recall started (a Stopwatch timestamp), for its duration.</summary>
    public long Started { get; }

    /// <summary>The recall is over (its outcome recorded): it no longer listens for the engine stopping.</summary>
    public void Ended() => _stopping.Dispose();

    /// <summary>
    /// The cache file the bytes go into, open from the fetch's start until the outcome is recorded (null when it could
    /// not be opened). The outcome is written through it: the mount renames on disk before the engine hears of it, so
    /// the path may name nothing by then while the file itself is still there (soak seed 999081977).
    /// </summary>
    public SafeFileHandle? File { get; set; }

    /// <summary>The stub's mark, written Recalling on the cache file before the first byte (null: the file is left as it is).</summary>
    public Files.StubMark? Mark { get; init; }

    /// <summary>The stub's time to the nanosecond when the fetch opened it: the recalled file gets it back (the index keeps 100 ns ticks).</summary>
    public Files.FileTime? StubTime { get; set; }

    /// <summary>Drive-relative; follows a rename of the file while it is recalling.</summary>
    public string Path { get; set; }

    public string Key { get; }

    public long Size { get; }

    public string? ExpectedChecksum { get; }

    /// <summary>The XXH3-128 recorded beside <see cref="ExpectedChecksum"/>: when known, the bytes are checked by it alone.</summary>
    public string? ExpectedXxh128 { get; }

    /// <summary>The object version every range is read from (If-Match): a replaced object fails the recall, never mixes.</summary>
    public ObjectVersion Version { get; }

    public long RangeSize { get; }

    public int RangeCount { get; }

    public CancellationTokenSource Cancellation { get; }

    /// <summary>Completes when every byte is in the cache file and hashed; faults with the first failure.</summary>
    public Task Data => _data.Task;

    /// <summary>
    /// The hashes of the bytes, in file order, set when <see cref="Data"/> completes: XXH3-128 alone when
    /// <see cref="ExpectedXxh128"/> is known, else SHA-256, with MD5 for an object GeoDrive did not write.
    /// </summary>
    public byte[]? Sha256 { get; set; }

    public byte[]? Md5 { get; set; }

    public byte[]? Xxh128 { get; set; }

    /// <summary>The version that answered the recall's GETs, with its metadata: what a HEAD of the object would have shown.</summary>
    public ObjectInfo? Answer { get; set; }

    /// <summary>
    /// Started as the open's check of the bucket too (fileSync): its GET asked for the stub's own version, so a version
    /// replaced or deleted there is a finding the open follows, not a failure to report.
    /// </summary>
    public bool AsCheck { get; set; }

    /// <summary>Set with the path's lock held, once the outcome is in the index.</summary>
    public bool Finished { get; set; }

    public TaskCompletionSource<FileEntry> Outcome { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public Task Runner { get; set; } = Task.CompletedTask;

    public (long Start, long Length) RangeOf(int range)
    {
        var start = range * RangeSize;
        return (start, RangeCount == 1 ? Size : Math.Min(RangeSize, Size - start));
    }

    public long PresentOf(int range)
    {
        lock (_gate)
        {
            return _present[range];
        }
    }

    /// <summary>Bytes already in the cache file (for status and tests).</summary>
    public long BytesPresent
    {
        get
        {
            lock (_gate)
            {
                return _present.Sum();
            }
        }
    }

    /// <summary>The next range nobody fetches yet, looking first from where a reader last asked.</summary>
    public bool TryTake(out int range)
    {
        lock (_gate)
        {
            for (var i = 0; i < RangeCount; i++)
            {
                var candidate = (_nextHint + i) % RangeCount;
                if (!_taken[candidate])
                {
                    _taken[candidate] = true;
                    range = candidate;
                    return true;
                }
            }
            range = -1;
            return false;
        }
    }

    /// <summary><paramref name="bytes"/> more of <paramref name="range"/> are in the cache file.</summary>
    public void Advance(int range, int bytes)
    {
        List<Waiter>? ready = null;
        var frontier = false;
        lock (_gate)
        {
            _present[range] += bytes;
            while (_contiguous < RangeCount && _present[_contiguous] >= RangeOf(_contiguous).Length)
            {
                _contiguous++;
            }
            frontier = range <= _contiguous;
            for (var i = _waiters.Count - 1; i >= 0; i--)
            {
                if (IsPresentLocked(_waiters[i].Offset, _waiters[i].End))
                {
                    (ready ??= []).Add(_waiters[i]);
                    _waiters.RemoveAt(i);
                }
            }
        }
        if (frontier)
        {
            Signal();
        }
        ready?.ForEach(w => w.Ready.TrySetResult());
    }

    /// <summary>Where the bytes present from the start of the file end (what may be hashed).</summary>
    public long ContiguousEnd()
    {
        lock (_gate)
        {
            return _contiguous >= RangeCount ? Size : RangeOf(_contiguous).Start + _present[_contiguous];
        }
    }

    /// <summary>Waits until the hashing frontier may have moved.</summary>
    public Task WaitForProgressAsync(CancellationToken cancellationToken) => _progress.WaitAsync(cancellationToken);

    /// <summary>
    /// Completes when [offset, offset+length) is in the cache file (clamped to the file's size), and
    /// makes the ranges from there on the next ones fetched. Faults when the recall failed.
    /// </summary>
    public ValueTask WaitForRangeAsync(long offset, long length, CancellationToken cancellationToken)
    {
        var end = Math.Min(Size, offset + Math.Max(0, length));
        offset = Math.Clamp(offset, 0, Size);
        Waiter waiter;
        lock (_gate)
        {
            if (_failure is not null)
            {
                return ValueTask.FromException(_failure);
            }
            if (IsPresentLocked(offset, end))
            {
                return ValueTask.CompletedTask;
            }
            _nextHint = (int)(offset / RangeSize) % RangeCount;
            waiter = new Waiter(offset, end, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
            _waiters.Add(waiter);
        }
        return new ValueTask(waiter.Ready.Task.WaitAsync(cancellationToken));
    }

    public void Complete() => _data.TrySetResult();

    /// <summary>The first failure wins; every waiting reader fails with it and the other workers stop.</summary>
    public void Fail(Exception failure)
    {
        List<Waiter> waiting;
        lock (_gate)
        {
            if (_failure is not null)
            {
                return;
            }
            _failure = failure;
            waiting = [.. _waiters];
            _waiters.Clear();
        }
        Cancellation.Cancel();
        waiting.ForEach(w => w.Ready.TrySetException(failure));
        _data.TrySetException(failure);
    }

    public Exception? Failure
    {
        get
        {
            lock (_gate)
            {
                return _failure;
            }
        }
    }

    private bool IsPresentLocked(long offset, long end)
    {
        if (end <= offset)
        {
            return true;
        }
        var first = (int)Math.Min(RangeCount - 1, offset / RangeSize);
        var last = (int)Math.Min(RangeCount - 1, (end - 1) / RangeSize);
        for (var range = first; range <= last; range++)
        {
            var (start, _) = RangeOf(range);
            if (_present[range] < Math.Min(end, start + RangeOf(range).Length) - start)
            {
                return false;
            }
        }
        return true;
    }

    private void Signal()
    {
        try
        {
            if (_progress.CurrentCount == 0)
            {
                _progress.Release();
            }
        }
        catch (SemaphoreFullException)
        {
            // Already signalled: the hasher will look again.
        }
    }

    private sealed record Waiter(long Offset, long End, TaskCompletionSource Ready);
}
