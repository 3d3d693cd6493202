using System.Collections.Concurrent;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Jobs;
using GeoDrive.State;
using GeoDrive.TestSupport;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The recall job scheduler on its own, its jobs kept in a real LiteDB index and time from a manual
/// clock. The drive it serves is the scheduler's boundary: its stubs are a list and a recall is recorded
/// (the whole path through a drive and the bucket is RecallJobTests').
/// </summary>
public sealed class RecallJobSchedulerTests : IDisposable
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: scheduler-tests }
        spec: {}
        """;

    private readonly TempDirectory _folder = new("jobs");
    private readonly LiteDbFileIndex _index;
    private readonly ManualClock _clock = new(new DateTimeOffset(2026, 3, 2, 5, 0, 0, TimeSpan.Zero));
    private readonly ConcurrentBag<string> _recalled = [];
    private readonly List<FileEntry> _stubs =
    [
        new() { Path = "Active/a.bin", State = FileState.Stubbed, Size = 100 },
        new() { Path = "Active/b.bin", State = FileState.Stubbed, Size = 200 },
        new() { Path = "Archive/c.bin", State = FileState.Stubbed, Size = 300 },
    ];
    private readonly List<(DriveEventKind Kind, string Message, string? ErrorId)> _events = [];
    private Func<string, CancellationToken, Task> _recall;

    public RecallJobSchedulerTests()
    {
        _index = new LiteDbFileIndex(_folder.Combine("index.db"));
        _recall = Recorded;
    }

    private Task Recorded(string path, CancellationToken cancellationToken)
    {
        _recalled.Add(path);
        return Task.CompletedTask;
    }

    public void Dispose()
    {
        _index.Dispose();
        _folder.Dispose();
    }

    private RecallJobScheduler NewScheduler(Func<string, CancellationToken, Task>? recall = null) => new(
        new RecallJobDrive("d1", () => DriveRig.Evaluator(Policy), () => _stubs, recall ?? ((path, ct) => _recall(path, ct)),
            (kind, _, message, errorId) =>
            {
                lock (_events)
                {
                    _events.Add((kind, message, errorId));
                }
            },
            TimeZoneInfo.Utc),
        _index, _clock, NullLogger.Instance);

    private static RecallJobSpec Daily6(string name = "morning") => new() { Name = name, Paths = ["Active"], Recurse = true, Schedule = "0 6 * * *" };

    [Fact]
    public async Task A_job_runs_at_its_cron_slot_once_and_recalls_only_the_stubs_it_selects()
    {
        var scheduler = NewScheduler();
        var view = scheduler.Register(Daily6());
        Assert.Equal(new DateTimeOffset(2026, 3, 2, 6, 0, 0, TimeSpan.Zero), view.NextRunUtc);

        scheduler.StartDue();
        await scheduler.Idle;
        Assert.Empty(_recalled);

        _clock.Advance(TimeSpan.FromHours(1));
        scheduler.StartDue();
        await scheduler.Idle;
        scheduler.StartDue();
        await scheduler.Idle;

        Assert.Equal(new[] { "Active/a.bin", "Active/b.bin" }, _recalled.Order(StringComparer.Ordinal));
        var record = scheduler.List().Single().Record;
        Assert.Equal(RecallJobResult.Succeeded, record.LastResult);
        Assert.Equal(1, record.RunCount);
        Assert.Equal(300, record.LastBytes);
    }

    [Fact]
    public async Task A_run_left_running_by_a_killed_service_is_interrupted_and_runs_again_at_the_next_start()
    {
        // The killed run's recalls never finish, however many it has started: its scheduler keeps this
        // delegate, not the field the restarted one reads.
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var scheduler = NewScheduler(async (path, ct) =>
        {
            entered.TrySetResult();
            await Task.Delay(Timeout.Infinite, ct);
        });
        scheduler.Register(Daily6());
        _clock.Advance(TimeSpan.FromHours(1));
        scheduler.StartDue();
        await entered.Task;
        // The store shows it running, as a kill -9 would leave it.
        Assert.Equal(RecallJobResult.Running, _index.ReadRecallJobs().Single().LastResult);

        // The next start reads the store afresh: the run left Running is Interrupted, and its slot is still due.
        var restarted = NewScheduler();
        Assert.Equal(RecallJobResult.Interrupted, restarted.List().Single().Record.LastResult);
        restarted.StartDue();
        await restarted.Idle;
        Assert.Equal(RecallJobResult.Succeeded, restarted.List().Single().Record.LastResult);
        Assert.Equal(2, _recalled.Count);
        await scheduler.StopAsync();
    }

    [Fact]
    public async Task A_file_that_fails_is_counted_named_in_the_result_and_does_not_stop_the_others()
    {
        var scheduler = NewScheduler();
        scheduler.Register(Daily6());
        _recall = (path, _) =>
        {
            if (path == "Active/a.bin")
            {
                throw new GeoDriveException(ErrorIds.EndpointUnreachable, ErrorKind.ResourceUnavailable, "The S3 endpoint cannot be reached.", "Check the network.");
            }
            _recalled.Add(path);
            return Task.CompletedTask;
        };
        _clock.Advance(TimeSpan.FromHours(1));
        scheduler.StartDue();
        await scheduler.Idle;

        var record = scheduler.List().Single().Record;
        Assert.Equal(RecallJobResult.PartlyFailed, record.LastResult);
        Assert.Equal(1, record.LastFailures);
        Assert.Contains("Active/a.bin", record.LastMessage);
        Assert.Equal(new[] { "Active/b.bin" }, _recalled);
        Assert.Contains(_events, e => e.Kind == DriveEventKind.Error && e.ErrorId == ErrorIds.EndpointUnreachable);
    }

    [Fact]
    public void A_bad_schedule_or_a_taken_name_is_refused_with_an_id_and_a_remedy()
    {
        var scheduler = NewScheduler();
        var badCron = Assert.Throws<GeoDriveException>(() => scheduler.Register(new RecallJobSpec { Name = "x", Paths = ["Active"], Schedule = "every morning" }));
        Assert.Equal(ErrorIds.InvalidCron, badCron.ErrorId);
        Assert.Contains("0 6 * * 1-5", badCron.Remedy);

        scheduler.Register(Daily6());
        var taken = Assert.Throws<GeoDriveException>(() => scheduler.Register(Daily6("MORNING")));
        Assert.Equal(ErrorIds.RecallJobExists, taken.ErrorId);
    }
}
