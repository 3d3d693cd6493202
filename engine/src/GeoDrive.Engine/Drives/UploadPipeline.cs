using System.Collections.Concurrent;
using System.Threading.Channels;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The upload pipeline: one bounded queue per drive, fed as files settle (by the tick, and by the last
/// close when the settle delay is 0), read by a fixed number of long-lived workers. A path is never
/// queued twice: from the moment it is queued until its upload ends it has one slot, and a change that
/// arrives meanwhile sends it round again once that upload ends. The drive's upload of one file is its
/// own (<paramref name="upload"/>); the pipeline decides when and how many at once.
/// </summary>
/// <param name="drive">The drive's name, for the log.</param>
/// <param name="options">Workers, queue capacity, tick batch and whether a tick waits for the pipeline.</param>
/// <param name="upload">Uploads one file now and returns its entry (Cached once verified).</param>
/// <param name="current">The file's entry as the index has it now (null once gone).</param>
/// <param name="dirtyFiles">Up to that many Dirty files, for the tick.</param>
/// <param name="isOpen">Whether a file has a handle open (never uploaded then).</param>
/// <param name="settle">The settle delay of the policy in force.</param>
/// <param name="suspended">Whether uploads are suspended (Suspend-CloudDrive).</param>
/// <param name="endpointAnswered">Told when an upload went through (bucket changes waiting for the endpoint go too).</param>
/// <param name="workers">How many files go up at once now (transfer.uploadThreads of the policy in force); the
/// options' <see cref="DriveEngineOptions.UploadConcurrency"/> when not given. Read again by <see cref="Resize"/>.</param>
public sealed class UploadPipeline(
    string drive,
    DriveEngineOptions options,
    Func<string, CancellationToken, Task<FileEntry>> upload,
    Func<string, FileEntry?> current,
    Func<int, IEnumerable<FileEntry>> dirtyFiles,
    Func<string, bool> isOpen,
    Func<TimeSpan> settle,
    Func<bool> suspended,
    Action endpointAnswered,
    IClock clock,
    ILogger logger,
    Func<int>? workers = null) : IAsyncDisposable
{
    private readonly ConcurrentDictionary<string, UploadSlot> _uploadSlots = new(StringComparer.Ordinal);
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lock _pipelineGate = new();
    private Channel<UploadSlot>? _uploadQueue;
    private readonly List<Task> _uploadWorkers = [];
    // Workers running (under _pipelineGate); one above the wanted number leaves before it takes its next file.
    private int _workersRunning;
    private int _uploadedSinceTick;
    private int _failedSinceTick;

    /// <summary>Files waiting in the queue (not yet taken by a worker).</summary>
    public int QueueLength => _uploadQueue?.Reader.Count ?? 0;

    /// <summary>Paths that hold a slot: queued or being uploaded.</summary>
    public IReadOnlyCollection<string> Paths => [.. _uploadSlots.Keys];

    /// <summary>Returns once no file is queued or uploading (what was queued meanwhile included).</summary>
    public async Task WhenIdleAsync(CancellationToken cancellationToken = default)
    {
        while (_uploadSlots.Values.ToArray() is { Length: > 0 } slots)
        {
            await Task.WhenAll(slots.Select(s => s.Done)).WaitAsync(cancellationToken);
        }
    }

    /// <summary>Stops the workers: queued files stay Dirty in the index, uploads in flight are cancelled and go again at the next start.</summary>
    public async ValueTask DisposeAsync()
    {
        Task[] workers;
        lock (_pipelineGate)
        {
            if (_stopping.IsCancellationRequested)
            {
                return;
            }
            _stopping.Cancel();
            _uploadQueue?.Writer.TryComplete();
            workers = [.. _uploadWorkers];
        }
        await Task.WhenAll(workers);
        foreach (var slot in _uploadSlots.Values)
        {
            slot.Close();
            slot.Complete(UploadOutcome.NotUploaded);
        }
        _uploadSlots.Clear();
    }

    /// <summary>
    /// Queues a Dirty file whose settle delay has passed. Returns its slot (a new one, or the one it
    /// already holds), or null when uploads are suspended, the pipeline is stopping, or the queue is full
    /// and <paramref name="waitForRoom"/> is false (the next tick queues it then).
    /// </summary>
    private async ValueTask<UploadSlot?> QueueUploadAsync(string path, bool waitForRoom, CancellationToken cancellationToken)
    {
        while (!suspended() && !_stopping.IsCancellationRequested)
        {
            var slot = new UploadSlot(path);
            var held = _uploadSlots.GetOrAdd(path, slot);
            if (held != slot)
            {
                if (held.AskAgain())
                {
                    return held;
                }
                // That slot just finished; take a new one.
                continue;
            }
            var queue = EnsureUploadWorkers();
            if (queue.Writer.TryWrite(slot))
            {
                return slot;
            }
            if (waitForRoom)
            {
                try
                {
                    await queue.Writer.WriteAsync(slot, cancellationToken);
                    return slot;
                }
                catch (Exception ex) when (ex is OperationCanceledException or ChannelClosedException)
                {
                    ReleaseSlot(slot, UploadOutcome.NotUploaded);
                    throw;
                }
            }
            ReleaseSlot(slot, UploadOutcome.NotUploaded);
            return null;
        }
        return null;
    }

    /// <summary>The file-system events' way in: a file that is due now (settle 0) goes straight to the queue.</summary>
    public void QueueIfDue(FileEntry entry)
    {
        if (IsDueForUpload(entry, clock.UtcNow))
        {
            _ = QueueUploadAsync(entry.Path, waitForRoom: false, CancellationToken.None).AsTask();
        }
    }

    private bool IsDueForUpload(FileEntry entry, DateTimeOffset now) =>
        entry.State == FileState.Dirty
        && !isOpen(entry.Path)
        && (entry.DirtySinceUtc is null || entry.DirtySinceUtc.Value + settle() <= now)
        && (entry.NextAttemptUtc is null || entry.NextAttemptUtc.Value <= now || EndpointAnsweredSinceItFailed(entry.Path));

    // Uploads whose last try failed only because the endpoint could not be reached (path -> how many uploads had
    // gone through by then): such a file need not wait out its backoff once another upload went through.
    private readonly ConcurrentDictionary<string, long> _uploadsWaitingForEndpoint = new(StringComparer.Ordinal);
    private long _uploadsThrough;

    private DateTimeOffset _lastEndpointTryUtc = DateTimeOffset.MinValue;

    /// <summary>
    /// Nothing else goes up, and files wait for an endpoint that did not answer: at most once per
    /// <see cref="OwedBucketChanges.EndpointTryInterval"/>, the first of them tries now, whatever its backoff;
    /// if it goes through, the rest follow (<see cref="WentThrough"/>). Without it, a file whose backoff had
    /// grown during an outage waited it out (up to minutes) after the endpoint was back.
    /// </summary>
    private string? TryEndpointNow(DateTimeOffset now)
    {
        if (_uploadsWaitingForEndpoint.IsEmpty || now - _lastEndpointTryUtc < OwedBucketChanges.EndpointTryInterval)
        {
            return null;
        }
        foreach (var path in _uploadsWaitingForEndpoint.Keys.Order(StringComparer.Ordinal))
        {
            if (current(path) is not { State: FileState.Dirty } entry)
            {
                // Uploaded, deleted or renamed meanwhile: nothing of it waits any more.
                _uploadsWaitingForEndpoint.TryRemove(path, out _);
                continue;
            }
            if (!isOpen(entry.Path) && !_uploadSlots.ContainsKey(path) && (entry.DirtySinceUtc is null || entry.DirtySinceUtc.Value + settle() <= now))
            {
                _lastEndpointTryUtc = now;
                return path;
            }
        }
        return null;
    }

    private bool EndpointAnsweredSinceItFailed(string path) =>
        _uploadsWaitingForEndpoint.TryGetValue(path, out var failedAfter) && failedAfter < Interlocked.Read(ref _uploadsThrough);

    /// <summary>
    /// The file's upload failed: when only because the endpoint could not be reached, it goes again as soon as the
    /// endpoint answers; otherwise (the server refused it, or it changed under the transfer) after its own backoff.
    /// </summary>
    public void Failed(string path, bool unreachable)
    {
        if (unreachable)
        {
            _uploadsWaitingForEndpoint[path] = Interlocked.Read(ref _uploadsThrough);
        }
        else
        {
            _uploadsWaitingForEndpoint.TryRemove(path, out _);
        }
    }

    /// <summary>The file's upload went through: files that waited for the endpoint need not wait out their backoff.</summary>
    public void WentThrough(string path)
    {
        _uploadsWaitingForEndpoint.TryRemove(path, out _);
        EndpointAnswered();
    }

    /// <summary>
    /// The endpoint answered a request (an upload's HEAD, an owed change): files and bucket changes that waited only
    /// for it need not wait out their backoff, whatever the request's own outcome. Before, only an upload that went
    /// through said so, and files waited tens of seconds after an outage when the file tried first did not.
    /// </summary>
    public void EndpointAnswered()
    {
        Interlocked.Increment(ref _uploadsThrough);
        endpointAnswered();
    }

    private int WantedWorkers => Math.Max(1, workers?.Invoke() ?? options.UploadConcurrency);

    private Channel<UploadSlot> EnsureUploadWorkers()
    {
        if (_uploadQueue is { } started)
        {
            return started;
        }
        lock (_pipelineGate)
        {
            if (_uploadQueue is null)
            {
                _uploadQueue = Channel.CreateBounded<UploadSlot>(new BoundedChannelOptions(Math.Max(options.UploadQueueCapacity, WantedWorkers))
                {
                    SingleReader = false,
                    SingleWriter = false,
                    FullMode = BoundedChannelFullMode.Wait,
                });
                StartWorkersLocked();
            }
            return _uploadQueue;
        }
    }

    /// <summary>
    /// Hot reload of transfer.uploadThreads: workers are started up to the number wanted now; workers beyond it
    /// leave once their file is done (none is cut short).
    /// </summary>
    public void Resize()
    {
        lock (_pipelineGate)
        {
            if (_uploadQueue is not null && !_stopping.IsCancellationRequested)
            {
                StartWorkersLocked();
            }
        }
    }

    private void StartWorkersLocked()
    {
        var queue = _uploadQueue!.Reader;
        _uploadWorkers.RemoveAll(t => t.IsCompleted);
        for (var wanted = WantedWorkers; _workersRunning < wanted; _workersRunning++)
        {
            _uploadWorkers.Add(Task.Run(() => RunUploadWorkerAsync(queue)));
        }
    }

    /// <summary>True (and counted out) when this worker is one more than wanted.</summary>
    private bool Retire()
    {
        lock (_pipelineGate)
        {
            if (_workersRunning <= WantedWorkers)
            {
                return false;
            }
            _workersRunning--;
            return true;
        }
    }

    private async Task RunUploadWorkerAsync(ChannelReader<UploadSlot> queue)
    {
        var stopping = _stopping.Token;
        while (await WaitToReadAsync(queue, stopping))
        {
            while (true)
            {
                if (Retire())
                {
                    return;
                }
                if (!queue.TryRead(out var slot))
                {
                    break;
                }
                var outcome = UploadOutcome.NotUploaded;
                try
                {
                    // Suspend-CloudDrive stops what has not started; the file stays Dirty and the tick queues it after Resume.
                    if (!suspended() && !stopping.IsCancellationRequested)
                    {
                        slot.Started();
                        var entry = await upload(slot.Path, stopping);
                        outcome = entry.State == FileState.Cached ? UploadOutcome.Uploaded : UploadOutcome.NotUploaded;
                    }
                }
                catch (OperationCanceledException) when (stopping.IsCancellationRequested)
                {
                    // Stopping: the entry is Dirty again (FailUploadAsync) and goes at the next start.
                }
                catch (Exception ex) when (ex is GeoDriveException or IOException or UnauthorizedAccessException)
                {
                    // Recorded as an event by UploadAsync; the file stays Dirty with its retry time.
                    outcome = UploadOutcome.Failed;
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    // A worker must outlive any one file.
                    logger.LogError(ex, "{Drive}: upload of {Path} failed unexpectedly", drive, slot.Path);
                    outcome = UploadOutcome.Failed;
                }
                if (outcome == UploadOutcome.Uploaded)
                {
                    Interlocked.Increment(ref _uploadedSinceTick);
                }
                else if (outcome == UploadOutcome.Failed)
                {
                    Interlocked.Increment(ref _failedSinceTick);
                }
                var askedAgain = slot.Close();
                if ((askedAgain || outcome == UploadOutcome.NotUploaded) && !stopping.IsCancellationRequested && !suspended()
                    && current(slot.Path) is { } now && IsDueForUpload(now, clock.UtcNow))
                {
                    // Changed while it was uploading: round again now (settle 0); otherwise the tick finds it. The next round's
                    // slot takes this one's place in one step: removed first, the path would be in no slot for a moment, and
                    // whoever waits for the pipeline to be idle could take that moment for the end (seen once in a unit test).
                    RequeueInPlaceOf(slot);
                }
                else
                {
                    _uploadSlots.TryRemove(KeyValuePair.Create(slot.Path, slot));
                }
                // Last, so whoever waits for the pipeline to be idle already sees the next round queued.
                slot.Complete(outcome);
            }
        }
    }

    private static async ValueTask<bool> WaitToReadAsync(ChannelReader<UploadSlot> queue, CancellationToken stopping)
    {
        try
        {
            return await queue.WaitToReadAsync(stopping);
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>A new slot for <paramref name="done"/>'s path, put in its place in the table and queued (freed when the queue is full: the tick finds the file).</summary>
    private void RequeueInPlaceOf(UploadSlot done)
    {
        var next = new UploadSlot(done.Path);
        if (!_uploadSlots.TryUpdate(done.Path, next, done))
        {
            _uploadSlots.TryRemove(KeyValuePair.Create(done.Path, done));
            return;
        }
        if (_uploadQueue is not { } queue || !queue.Writer.TryWrite(next))
        {
            ReleaseSlot(next, UploadOutcome.NotUploaded);
        }
    }

    /// <summary>Frees a slot that never reached a worker.</summary>
    private void ReleaseSlot(UploadSlot slot, UploadOutcome outcome)
    {
        slot.Close();
        _uploadSlots.TryRemove(KeyValuePair.Create(slot.Path, slot));
        slot.Complete(outcome);
    }

    /// <summary>
    /// The scheduler's part: queues every settled Dirty file and reports what the workers finished since
    /// the previous tick. With <see cref="DriveEngineOptions.TickWaitsForUploads"/> (tests, tools) it
    /// first waits until the pipeline is idle; the Service's tick only queues.
    /// </summary>
    public async Task<(int Uploaded, int Failed)> TickAsync(CancellationToken cancellationToken)
    {
        if (suspended())
        {
            return (Interlocked.Exchange(ref _uploadedSinceTick, 0), Interlocked.Exchange(ref _failedSinceTick, 0));
        }
        var now = clock.UtcNow;
        var due = dirtyFiles(options.TickBatchSize)
            .Where(e => IsDueForUpload(e, now) && !_uploadSlots.ContainsKey(e.Path))
            .Select(e => e.Path)
            .ToList();
        if (due.Count == 0 && TryEndpointNow(now) is { } trying)
        {
            due.Add(trying);
        }
        var wait = options.TickWaitsForUploads;
        foreach (var path in due)
        {
            await QueueUploadAsync(path, waitForRoom: wait, cancellationToken);
        }
        if (wait)
        {
            // A stepping tick returns with the pipeline idle, including files their close queued before it.
            await WhenIdleAsync(cancellationToken);
        }
        return (Interlocked.Exchange(ref _uploadedSinceTick, 0), Interlocked.Exchange(ref _failedSinceTick, 0));
    }

    private enum UploadOutcome
    {
        NotUploaded,
        Uploaded,
        Failed,
    }

    /// <summary>A path's place in the pipeline, from queued to the end of its upload.</summary>
    private sealed class UploadSlot(string path)
    {
        private readonly Lock _gate = new();
        private readonly TaskCompletionSource<UploadOutcome> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private bool _started;
        private bool _askedAgain;
        private bool _finished;

        public string Path { get; } = path;

        public Task<UploadOutcome> Done => _done.Task;

        public void Started()
        {
            lock (_gate)
            {
                _started = true;
            }
        }

        /// <summary>Someone wants this path uploaded while it holds this slot; false when the slot has just finished.</summary>
        public bool AskAgain()
        {
            lock (_gate)
            {
                if (_finished)
                {
                    return false;
                }
                // Still queued: the upload has not read the file yet, so it takes the change with it.
                _askedAgain |= _started;
                return true;
            }
        }

        /// <summary>No one can join this slot any more; true when someone asked for the path while its upload ran.</summary>
        public bool Close()
        {
            lock (_gate)
            {
                _finished = true;
                return _askedAgain;
            }
        }

        public void Complete(UploadOutcome outcome) => _done.TrySetResult(outcome);
    }
}
