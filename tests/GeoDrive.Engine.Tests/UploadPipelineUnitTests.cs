using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The upload pipeline on its own: when files go, how many at once, and that a path is never in it twice.
/// The upload of one file is the drive's (UploadPipelineTests drive the pipeline through a real drive and bucket);
/// here it is recorded, and held where a test needs it held.
/// </summary>
public sealed class UploadPipelineUnitTests : IAsyncLifetime
{
    private readonly ManualClock _clock = new(new DateTimeOffset(2026, 11, 26, 12, 0, 0, TimeSpan.Zero));
    private readonly ConcurrentDictionary<string, FileEntry> _files = new(StringComparer.Ordinal);
    private readonly ConcurrentQueue<string> _uploaded = new();
    private readonly HashSet<string> _open = [];
    private readonly ConcurrentDictionary<string, byte> _writtenDuringUpload = new(StringComparer.Ordinal);
    private TaskCompletionSource _held = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private TaskCompletionSource _started = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _running;
    private int _mostAtOnce;
    private bool _suspended;
    private UploadPipeline _pipeline = null!;
    private int _workers = 2;
    // Run when the pipeline asks for a file's entry (a worker does right after an upload, to see whether it goes again).
    private Action? _onCurrent;
    // Set once that many uploads ran at the same moment.
    private readonly TaskCompletionSource[] _atOnce = [.. Enumerable.Range(0, 9).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously))];

    public Task InitializeAsync()
    {
        _pipeline = new UploadPipeline("d1", new DriveEngineOptions { Name = "d1", CachePath = "/nowhere", UploadConcurrency = 2 },
            UploadAsync, path => { _onCurrent?.Invoke(); return _files.GetValueOrDefault(path); }, _ => _files.Values.Where(f => f.State == FileState.Dirty),
            path => _open.Contains(path), () => TimeSpan.FromSeconds(30), () => _suspended, () => { }, _clock, NullLogger.Instance, () => _workers);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        _held.TrySetResult();
        await _pipeline.DisposeAsync();
    }

    private async Task<FileEntry> UploadAsync(string path, CancellationToken cancellationToken)
    {
        var now = Interlocked.Increment(ref _running);
        InterlockedMax(ref _mostAtOnce, now);
        foreach (var reached in _atOnce.Take(now + 1))
        {
            reached.TrySetResult();
        }
        _started.TrySetResult();
        try
        {
            await _held.Task.WaitAsync(cancellationToken);
            var entry = _files[path];
            _uploaded.Enqueue(path);
            // As the drive's upload does: bytes written meanwhile leave the file Dirty (the object holds older ones).
            entry.State = _writtenDuringUpload.TryRemove(path, out _) ? FileState.Dirty : FileState.Cached;
            return entry;
        }
        finally
        {
            Interlocked.Decrement(ref _running);
        }
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int seen;
        while ((seen = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, seen) != seen)
        {
        }
    }

    private FileEntry Dirty(string path, int secondsAgo) =>
        _files[path] = new FileEntry { Path = path, State = FileState.Dirty, DirtySinceUtc = _clock.UtcNow.AddSeconds(-secondsAgo) };

    [Fact]
    public async Task A_tick_uploads_settled_closed_files_at_most_as_many_at_once_as_there_are_workers()
    {
        foreach (var i in Enumerable.Range(0, 6))
        {
            Dirty($"settled{i}.bin", 60);
        }
        Dirty("fresh.bin", 5);
        Dirty("open.bin", 60);
        _open.Add("open.bin");
        _held.SetResult();

        var (uploaded, failed) = await _pipeline.TickAsync(CancellationToken.None);

        Assert.Equal(6, uploaded);
        Assert.Equal(0, failed);
        Assert.Equal(Enumerable.Range(0, 6).Select(i => $"settled{i}.bin"), _uploaded.Order(StringComparer.Ordinal));
        Assert.InRange(_mostAtOnce, 1, 2);
    }

    [Fact]
    public async Task A_file_changed_while_its_upload_runs_holds_one_slot_and_goes_round_again_once_that_upload_ends()
    {
        var entry = Dirty("log.txt", 60);
        _pipeline.QueueIfDue(entry);
        await _started.Task;

        // Written again while it uploads, and asked for again (twice) before the upload ends.
        _writtenDuringUpload["log.txt"] = 0;
        _pipeline.QueueIfDue(entry);
        _pipeline.QueueIfDue(entry);
        Assert.Equal(["log.txt"], _pipeline.Paths);
        _held.SetResult();
        await _pipeline.WhenIdleAsync();

        Assert.Equal(["log.txt", "log.txt"], _uploaded);
        Assert.Equal(1, _mostAtOnce);
        Assert.Empty(_pipeline.Paths);
    }

    [Fact]
    public async Task Suspended_nothing_is_queued_and_a_tick_queues_it_after_resume()
    {
        Dirty("a.bin", 60);
        _suspended = true;
        _held.SetResult();

        Assert.Equal((0, 0), await _pipeline.TickAsync(CancellationToken.None));
        Assert.Empty(_uploaded);

        _suspended = false;
        Assert.Equal((1, 0), await _pipeline.TickAsync(CancellationToken.None));
        Assert.Equal(["a.bin"], _uploaded);
    }

    [Fact]
    public async Task Upload_threads_raised_by_a_saved_policy_start_more_workers_now_and_lowered_let_the_extra_ones_leave_after_their_file()
    {
        foreach (var i in Enumerable.Range(0, 12))
        {
            _pipeline.QueueIfDue(Dirty($"f{i}.bin", 60));
        }
        await _atOnce[2].Task.WaitAsync(TimeSpan.FromSeconds(10));

        _workers = 5;
        _pipeline.Resize();
        await _atOnce[5].Task.WaitAsync(TimeSpan.FromSeconds(10));

        _workers = 1;
        _pipeline.Resize();
        _held.SetResult();
        await _pipeline.WhenIdleAsync();
        Assert.Equal(12, _uploaded.Count);
        Assert.Equal(5, _mostAtOnce);

        // Only one worker is left: the next files go one at a time.
        _mostAtOnce = 0;
        foreach (var i in Enumerable.Range(0, 6))
        {
            _pipeline.QueueIfDue(Dirty($"g{i}.bin", 60));
        }
        await _pipeline.WhenIdleAsync();
        Assert.Equal(1, _mostAtOnce);
    }

    [Fact]
    public async Task Waiting_for_idle_while_a_changed_file_goes_round_again_never_ends_between_its_two_uploads()
    {
        var entry = Dirty("log.txt", 60);
        _pipeline.QueueIfDue(entry);
        await _started.Task;
        _writtenDuringUpload["log.txt"] = 0;
        // The moment the worker decides whether the file goes round again: someone starts waiting for the pipeline then.
        Task<int>? uploadsWhenIdle = null;
        _onCurrent = () => uploadsWhenIdle ??= _pipeline.WhenIdleAsync().ContinueWith(_ => _uploaded.Count, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

        _held.SetResult();
        await _pipeline.WhenIdleAsync();

        Assert.NotNull(uploadsWhenIdle);
        Assert.Equal(2, await uploadsWhenIdle);
    }
}
