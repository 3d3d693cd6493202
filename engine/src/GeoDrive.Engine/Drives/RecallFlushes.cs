using System.Runtime.InteropServices;
using GeoDrive.Engine.Files;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Recalled files whose bytes are verified but not yet known to be on disk (docs/decisions/0031-recall-flushed-after-its-answer.md).
/// A recall under the file's own key records Cached and answers its open without waiting for the disk; the file keeps
/// its stub's Recalling mark, so a restart before the flush takes it for an interrupted recall (kept only if its bytes
/// hash to the recorded checksum, else a stub again: never a Cached file of zeros). In the background one syncfs makes a
/// batch durable, then each file's mark goes under the file's lock. Anything that would change such a file (a write
/// open, a truncate, a rename, new properties, a stub, a delete) first calls <see cref="SettleLocked"/> under that
/// lock, so no byte of a user's ever sits under the mark. Holds each file's recall handle until its mark is gone, so a
/// rename on disk moves the file, not what is flushed.
/// </summary>
internal sealed partial class RecallFlushes : IAsyncDisposable
{
    /// <summary>Files that may wait for the background at once; a recall beyond it settles its own file before it answers.</summary>
    public const int MaxPending = 256;

    /// <summary>The background flushes once this many files wait, or <see cref="GatherFor"/> after the first of a batch.</summary>
    public const int BatchSize = 128;

    /// <summary>
    /// How long the background gathers a batch: a syncfs per file cost the disk a journal commit and a cache flush each,
    /// as the fsync did; one per batch costs one.
    /// </summary>
    public static readonly TimeSpan GatherFor = TimeSpan.FromMilliseconds(500);

    private readonly PathLocks _locks;
    private readonly Action<string?, Exception> _failed;
    private readonly Action<string> _recorded;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, SafeFileHandle> _pending = new(StringComparer.Ordinal);
    private readonly SemaphoreSlim _wake = new(0);
    private readonly SemaphoreSlim _batchFull = new(0);
    private readonly SemaphoreSlim _flushing = new(1, 1);
    private readonly CancellationTokenSource _stopping = new();
    private readonly Task _worker;
    private TaskCompletionSource? _empty;

    /// <param name="locks">The drive's path locks: a mark goes only under its file's.</param>
    /// <param name="failed">Told of a file whose bytes could not be flushed (it stays pending, its mark in place).</param>
    /// <param name="recorded">
    /// Makes the index's record of the file's recall durable, under the file's lock, before its mark goes: its Cached was
    /// written deferred, and a mark gone before it left a kill -9 a stub or a recall in the index over a file without its
    /// mark, whose later bytes a restart set aside as a conflict copy or threw away with the recall (soak seeds 706964756,
    /// 359017918). Called once per batch: every deferred write before a durable one goes to the disk with it.
    /// </param>
    public RecallFlushes(PathLocks locks, Action<string?, Exception> failed, Action<string> recorded)
    {
        _locks = locks;
        _failed = failed;
        _recorded = recorded;
        _worker = Task.Run(RunAsync);
    }

    /// <summary>
    /// Tests only: the background does nothing, and neither does disposal, as if the process died before the flush
    /// (a crash stand-in). <see cref="SettleLocked"/> and <see cref="FlushAllAsync"/> still work.
    /// </summary>
    public bool Held { get; set; }

    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _pending.Count;
            }
        }
    }

    /// <summary>
    /// Takes a recalled file's handle (its bytes all in and verified, the file's lock held by the caller) to flush in the
    /// background. Past <see cref="MaxPending"/> files waiting, it is settled here and now; a flush that fails leaves it
    /// waiting, its mark in place, and is told.
    /// </summary>
    public void Add(string path, SafeFileHandle handle)
    {
        SafeFileHandle? earlier;
        int count;
        lock (_gate)
        {
            // None is expected (a file leaving Cached settles first); a recall of the same name after a rename onto it may.
            _pending.Remove(path, out earlier);
            _pending[path] = handle;
            count = _pending.Count;
        }
        if (count == BatchSize)
        {
            _batchFull.Release();
        }
        if (earlier is not null)
        {
            try
            {
                Settle(earlier);
            }
            catch (IOException)
            {
                // The file it flushed is no longer at the name (another recall's is): nothing there to keep marked.
                earlier.Dispose();
            }
        }
        if (count > MaxPending)
        {
            try
            {
                SettleLocked(path);
            }
            catch (IOException ex)
            {
                _failed(path, ex);
            }
            return;
        }
        if (_wake.CurrentCount == 0)
        {
            _wake.Release();
        }
    }

    /// <summary>Flushes the file's bytes and removes its mark now, if it waits here. The caller holds the file's lock.</summary>
    public void SettleLocked(string path)
    {
        SafeFileHandle? handle;
        lock (_gate)
        {
            if (!_pending.Remove(path, out handle))
            {
                return;
            }
        }
        try
        {
            Settle(handle, () => _recorded(path));
        }
        catch
        {
            lock (_gate)
            {
                _pending.TryAdd(path, handle);
            }
            throw;
        }
        lock (_gate)
        {
            EmptiedLocked();
        }
    }

    /// <summary>
    /// Flushes the bytes of an open recalled file, then (<paramref name="recorded"/>: the file's record made durable first,
    /// when it is still at its name) removes its Recalling mark; closes the handle.
    /// </summary>
    private static void Settle(SafeFileHandle handle, Action? recorded = null)
    {
        RandomAccess.FlushToDisk(handle);
        recorded?.Invoke();
        ClearRecallingMark(handle);
        handle.Dispose();
    }

    /// <summary>Completes once nothing waits here (tests: the background flushed every file).</summary>
    public Task WhenEmptyAsync()
    {
        lock (_gate)
        {
            if (_pending.Count == 0)
            {
                return Task.CompletedTask;
            }
            _empty ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _empty.Task;
        }
    }

    /// <summary>
    /// Flushes every file waiting now and removes their marks, each under its lock. Cancelled (waiting for a lock), the
    /// rest keep their marks and stay waiting.
    /// </summary>
    public async Task FlushAllAsync(CancellationToken cancellationToken = default)
    {
        await _flushing.WaitAsync(cancellationToken);
        try
        {
            KeyValuePair<string, SafeFileHandle>[] batch;
            lock (_gate)
            {
                batch = [.. _pending];
            }
            if (batch.Length == 0)
            {
                return;
            }
            var flushed = Flush(batch);
            var recorded = false;
            foreach (var (path, handle) in batch)
            {
                if (!flushed(handle))
                {
                    continue;
                }
                using (await _locks.AcquireAsync(path, cancellationToken))
                {
                    lock (_gate)
                    {
                        // Settled meanwhile by a change of the file's, or replaced by a later recall this flush did not cover.
                        if (!_pending.TryGetValue(path, out var current) || current != handle)
                        {
                            continue;
                        }
                        _pending.Remove(path);
                    }
                    if (!recorded)
                    {
                        // The batch's Cached records, written deferred before their files waited here, go with this one.
                        _recorded(path);
                        recorded = true;
                    }
                    ClearRecallingMark(handle);
                    handle.Dispose();
                }
                lock (_gate)
                {
                    EmptiedLocked();
                }
            }
        }
        finally
        {
            _flushing.Release();
        }
    }

    /// <summary>Stops the background; unless <see cref="Held"/>, what waits is flushed first (a clean stop leaves no mark behind).</summary>
    public async ValueTask DisposeAsync()
    {
        if (_stopping.IsCancellationRequested)
        {
            return;
        }
        await _stopping.CancelAsync();
        await _worker;
        if (!Held)
        {
            // Bounded: a file whose lock a stuck operation holds keeps its mark, and the next start checks its bytes.
            using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            try
            {
                await FlushAllAsync(patience.Token);
            }
            catch (OperationCanceledException) when (patience.IsCancellationRequested)
            {
            }
        }
        lock (_gate)
        {
            foreach (var handle in _pending.Values)
            {
                handle.Dispose();
            }
            _pending.Clear();
        }
    }

    private async Task RunAsync()
    {
        var stopping = _stopping.Token;
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                await _wake.WaitAsync(stopping);
                while (_batchFull.Wait(0))
                {
                    // A batch that filled while the last one was flushed: this one takes whatever waits now.
                }
                if (Count < BatchSize)
                {
                    await _batchFull.WaitAsync(GatherFor, stopping);
                }
                if (!Held)
                {
                    await FlushAllAsync();
                }
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception ex)
            {
                // Whatever it met, the files stay pending with their marks, and the next recall or change tries again.
                _failed(null, ex);
            }
        }
    }

    /// <summary>
    /// Makes the batch durable: one syncfs of the cache volume for all (one journal commit, where a fsync each cost one
    /// per file); if that fails, a fsync each. Returns which handles are flushed; a failed one is told and stays pending.
    /// </summary>
    private Func<SafeFileHandle, bool> Flush(KeyValuePair<string, SafeFileHandle>[] batch)
    {
        if (Native.SyncFs(batch[0].Value) == 0)
        {
            return static _ => true;
        }
        var failed = new HashSet<SafeFileHandle>();
        foreach (var (path, handle) in batch)
        {
            try
            {
                RandomAccess.FlushToDisk(handle);
            }
            catch (Exception ex) when (ex is IOException or ObjectDisposedException)
            {
                failed.Add(handle);
                _failed(path, ex);
            }
        }
        return handle => !failed.Contains(handle);
    }

    /// <summary>Removes the mark only while it is a recall's: a stub's own mark is never taken off here.</summary>
    private static void ClearRecallingMark(SafeFileHandle handle)
    {
        if (StubMark.Read(handle) is { Recalling: true })
        {
            StubMark.Clear(handle);
        }
    }

    private void EmptiedLocked()
    {
        if (_pending.Count == 0 && _empty is { } empty)
        {
            _empty = null;
            empty.TrySetResult();
        }
    }

    private static partial class Native
    {
        [LibraryImport("libc", EntryPoint = "syncfs", SetLastError = true)]
        public static partial int SyncFs(SafeFileHandle fd);
    }
}
