using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Jobs;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Scheduled recall jobs on real parts (bucket, LiteDB index, policy YAML) under a manual clock: the
/// clock starts Monday 2026-01-05 09:00 UTC and schedules are read in UTC.
/// </summary>
public sealed class RecallJobTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string MorningPolicy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: jobs }
        spec:
          stubbing: { enabled: true, accessWait: 30d }
          recallJobs:
            - { name: morning-prewarm, paths: ["Active/**"], schedule: "0 6 * * 1-5" }
        """;

    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3, MorningPolicy);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private async Task StubsAsync(params (string Path, int Size)[] files)
    {
        foreach (var (path, size) in files)
        {
            await _rig.WriteAsync(path, DriveRig.RandomBytes(size, size));
            await _rig.Engine.UploadAsync(path);
            Assert.Equal(FileState.Stubbed, (await _rig.Engine.StubAsync(path)).State);
        }
    }

    /// <summary>Moves the clock to a UTC wall time, ticks as the service does each second, and waits for any job started.</summary>
    private async Task TickAtAsync(DateTimeOffset time)
    {
        _rig.Clock.Advance(time - _rig.Clock.UtcNow);
        await _rig.Engine.TickAsync();
        await _rig.Engine.RecallJobsIdle;
    }

    private RecallJobView Job(string name) => Assert.Single(_rig.Engine.RecallJobs(), j => j.Record.Name == name);

    private static DateTimeOffset At(int day, int hour, int minute = 0, int second = 0) => new(2026, 1, day, hour, minute, second, TimeSpan.Zero);

    [Fact]
    public async Task A_policy_job_runs_at_its_cron_time_not_before_and_not_twice_for_one_slot()
    {
        await StubsAsync(("Active/a.bin", 10_000), ("Active/sub/b.bin", 20_000), ("Other/c.bin", 5_000));

        var job = Job("morning-prewarm");
        Assert.Equal(RecallJobSource.Policy, job.Record.Source);
        Assert.Equal(At(6, 6), job.NextRunUtc); // created Monday 09:00: the first slot is Tuesday 06:00
        Assert.Contains("test-policy.yaml", job.DeclaredAt, StringComparison.Ordinal);

        await TickAtAsync(At(6, 5, 59, 59));
        Assert.Null(Job("morning-prewarm").Record.LastResult);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Active/a.bin"));

        await TickAtAsync(At(6, 6, 0, 0));
        job = Job("morning-prewarm");
        Assert.Equal((RecallJobResult.Succeeded, 2, 30_000L, 0, 1), (job.Record.LastResult, job.Record.LastFiles, job.Record.LastBytes, job.Record.LastFailures, job.Record.RunCount));
        Assert.Equal(At(6, 6), job.Record.LastRunStartUtc);
        Assert.Equal(FileState.Cached, _rig.StateOf("Active/a.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("Active/sub/b.bin"));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Other/c.bin"));

        await TickAtAsync(At(6, 6, 0, 1));
        await TickAtAsync(At(6, 6, 30));
        await TickAtAsync(At(7, 5, 59));
        Assert.Equal(1, Job("morning-prewarm").Record.RunCount);
        Assert.Equal(At(7, 6), Job("morning-prewarm").NextRunUtc);

        // Nothing ticked Wednesday and Thursday (as if the service were down): one run on Friday covers them, then Monday (1-5 skips the weekend).
        await TickAtAsync(At(9, 6));
        Assert.Equal(2, Job("morning-prewarm").Record.RunCount);
        Assert.Equal(At(12, 6), Job("morning-prewarm").NextRunUtc);
    }

    [Fact]
    public async Task A_registered_job_missed_while_the_service_was_down_runs_once_at_start_and_keeps_its_history()
    {
        await StubsAsync(("Scans/x.pdf", 30_000), ("Scans/y.pdf", 40_000));
        _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "hourly-scans", Paths = ["Scans"], Recurse = true, Schedule = "0 * * * *", ThrottleLimit = 2 });

        await TickAtAsync(At(5, 10));
        Assert.Equal((1, 2, 70_000L), (Job("hourly-scans").Record.RunCount, Job("hourly-scans").Record.LastFiles, Job("hourly-scans").Record.LastBytes));

        await _rig.Engine.StubAsync("Scans/x.pdf");
        _rig.Clock.Advance(TimeSpan.FromHours(5) + TimeSpan.FromMinutes(30)); // down over five hourly slots
        await _rig.RestartAsync();
        var restarted = Job("hourly-scans");
        Assert.Equal(RecallJobSource.Registered, restarted.Record.Source);
        Assert.Equal(At(5, 11), restarted.NextRunUtc); // overdue since 11:00

        await TickAtAsync(_rig.Clock.UtcNow);
        await TickAtAsync(_rig.Clock.UtcNow.AddSeconds(1));
        await TickAtAsync(At(5, 15, 59));

        var job = Job("hourly-scans");
        Assert.Equal(2, job.Record.RunCount);
        Assert.Equal((RecallJobResult.Succeeded, 1, 30_000L), (job.Record.LastResult, job.Record.LastFiles, job.Record.LastBytes));
        Assert.Equal(At(5, 15, 30), job.Record.LastRunStartUtc);
        Assert.Equal(At(5, 16), job.NextRunUtc);
        Assert.Equal(FileState.Cached, _rig.StateOf("Scans/x.pdf"));
    }

    [Fact]
    public async Task A_failure_in_the_middle_of_a_job_is_recorded_with_files_bytes_failures_and_result_and_survives_a_restart()
    {
        await StubsAsync(("Active/1.bin", 11_000), ("Active/2.bin", 12_000), ("Active/3.bin", 13_000), ("Active/4.bin", 14_000));
        // Someone deletes two objects from the bucket behind the drive.
        await _rig.Store.DeleteAsync(_rig.Engine.GetFile("Active/2.bin")!.ObjectKey ?? "Active/2.bin");
        await _rig.Store.DeleteAsync(_rig.Engine.GetFile("Active/4.bin")!.ObjectKey ?? "Active/4.bin");

        await TickAtAsync(At(6, 6));

        await _rig.RestartAsync();
        var job = Job("morning-prewarm");
        Assert.Equal(RecallJobResult.PartlyFailed, job.Record.LastResult);
        Assert.Equal((2, 24_000L, 2), (job.Record.LastFiles, job.Record.LastBytes, job.Record.LastFailures));
        Assert.Contains("2 of 4 files failed", job.Record.LastMessage, StringComparison.Ordinal);
        Assert.Contains(ErrorIds.ObjectNotFound, job.Record.LastMessage, StringComparison.Ordinal);
        Assert.Equal(At(6, 6), job.Record.LastRunEndUtc);
        Assert.Equal(At(7, 6), job.NextRunUtc); // a failed run is still a run: no retry every tick
        Assert.Equal(FileState.Cached, _rig.StateOf("Active/1.bin"));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Active/2.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("Active/3.bin"));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Active/4.bin"));
        Assert.Contains(_rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.Message.StartsWith("Recall job 'morning-prewarm' partlyfailed: 2 files (23.44 KiB) recalled, 2 failed.", StringComparison.Ordinal) && e.ErrorId == ErrorIds.ObjectNotFound);
    }

    [Fact]
    public async Task Two_jobs_due_at_once_on_one_drive_run_one_after_the_other()
    {
        await StubsAsync(("Active/a.bin", 10_000), ("Active/b.bin", 10_000), ("Other/c.bin", 10_000), ("Other/d.bin", 10_000));
        _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "other", Paths = ["Other/**"], Schedule = "0 6 * * *", ThrottleLimit = 8 });

        await TickAtAsync(At(6, 6));

        Assert.All(_rig.Engine.RecallJobs(), j => Assert.Equal((RecallJobResult.Succeeded, 2, 1), (j.Record.LastResult!.Value, j.Record.LastFiles, j.Record.RunCount)));
        // The event log, oldest first: each job's start, its file recalls and its end, never interleaved.
        var log = _rig.Engine.ReadEvents(kind: DriveEventKind.Recall).Reverse().Select(e => e.Path ?? e.Message[..e.Message.IndexOf(':', StringComparison.Ordinal)]).ToList();
        Assert.Equal(
            ["Recall job 'morning-prewarm' started", "Active/a.bin", "Active/b.bin", "Recall job 'morning-prewarm' succeeded", "Recall job 'other' started", "Other/c.bin", "Other/d.bin", "Recall job 'other' succeeded"],
            [log[0], .. log[1..3].Order(StringComparer.Ordinal), log[3], log[4], .. log[5..7].Order(StringComparer.Ordinal), log[7]]);
    }

    [Fact]
    public async Task A_job_that_falls_due_while_another_runs_waits_for_it()
    {
        await StubsAsync(("Active/a.bin", 10_000), ("Other/c.bin", 10_000));
        // The same drive (index, cache, real bucket) in an engine whose downloads the test can hold, so
        // the first job is still running when the second falls due.
        var store = new HeldDownloads(_rig.Store);
        var engine = new Drives.DriveEngine(new Drives.DriveEngineOptions { Name = "held", CachePath = _rig.CachePath, TimeZone = TimeZoneInfo.Utc }, store, _rig.Index, _rig.Policy, _rig.Clock);
        engine.RegisterRecallJob(new RecallJobSpec { Name = "other", Paths = ["Other/**"], Schedule = "1 6 * * *" });

        _rig.Clock.Advance(At(6, 6) - _rig.Clock.UtcNow);
        await engine.TickAsync();
        await store.Started.WaitAsync(TimeSpan.FromSeconds(30)); // morning-prewarm is downloading Active/a.bin
        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await engine.TickAsync();
        await engine.TickAsync();

        var jobs = engine.RecallJobs();
        Assert.True(Assert.Single(jobs, j => j.Record.Name == "morning-prewarm").Running);
        var waiting = Assert.Single(jobs, j => j.Record.Name == "other");
        Assert.False(waiting.Running);
        Assert.Null(waiting.Record.LastResult);
        Assert.Equal(At(6, 6, 1), waiting.NextRunUtc); // due, waiting
        Assert.Equal(FileState.Stubbed, engine.GetFile("Other/c.bin")!.State);

        store.Release();
        await engine.RecallJobsIdle;
        Assert.All(engine.RecallJobs(), j => Assert.Equal((RecallJobResult.Succeeded, 1, 1), (j.Record.LastResult!.Value, j.Record.LastFiles, j.Record.RunCount)));
        Assert.Equal(FileState.Cached, engine.GetFile("Other/c.bin")!.State);
        await engine.StopRecallJobsAsync();
    }

    [Fact]
    public async Task A_job_stopped_in_the_middle_keeps_its_progress_shows_Interrupted_and_runs_again_once_at_the_next_start()
    {
        await StubsAsync(("Active/1.bin", 11_000), ("Active/2.bin", 12_000));
        var store = new HeldDownloads(_rig.Store, passFirst: 1);
        var engine = new Drives.DriveEngine(new Drives.DriveEngineOptions { Name = "held", CachePath = _rig.CachePath, TimeZone = TimeZoneInfo.Utc }, store, _rig.Index, _rig.Policy, _rig.Clock);
        _rig.Clock.Advance(At(6, 6) - _rig.Clock.UtcNow);
        await engine.TickAsync();
        await store.Started.WaitAsync(TimeSpan.FromSeconds(30));
        await DriveEventually(() => engine.RecallJobs().Single().Record.LastFiles == 1);

        await engine.StopRecallJobsAsync(); // the service stops during the run

        await _rig.RestartAsync();
        var job = Job("morning-prewarm");
        Assert.Equal((RecallJobResult.Interrupted, 1, 1), (job.Record.LastResult!.Value, job.Record.LastFiles, job.Record.RunCount));
        Assert.Equal(1, new[] { "Active/1.bin", "Active/2.bin" }.Count(p => _rig.StateOf(p) == FileState.Cached));
        Assert.Equal(At(6, 6), job.NextRunUtc); // its slot was not handled: due at once

        await TickAtAsync(At(6, 9));
        await TickAtAsync(At(6, 9, 0, 1));
        job = Job("morning-prewarm");
        Assert.Equal((RecallJobResult.Succeeded, 1, 2), (job.Record.LastResult!.Value, job.Record.LastFiles, job.Record.RunCount));
        Assert.Equal(FileState.Cached, _rig.StateOf("Active/2.bin"));
    }

    private static async Task DriveEventually(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "not reached within 30 s");
            await Task.Delay(20);
        }
    }

    /// <summary>The real store, with downloads held until the test releases them (a seam, not a stand-in: every byte comes from the bucket).</summary>
    private sealed class HeldDownloads(Core.Ports.IObjectStore inner, int passFirst = 0) : ForwardingStore(inner)
    {
        private int _passed;

        private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _started = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task Started => _started.Task;

        public void Release() => _release.TrySetResult();

        public override async Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
        {
            if (Interlocked.Increment(ref _passed) <= passFirst)
            {
                return await base.GetAsync(key, destination, offset, length, expected, cancellationToken);
            }
            _started.TrySetResult();
            await _release.Task.WaitAsync(cancellationToken);
            return await base.GetAsync(key, destination, offset, length, expected, cancellationToken);
        }
    }

    [Fact]
    public void Register_refuses_bad_cron_a_taken_name_and_Unregister_refuses_a_policy_job()
    {
        var bad = Assert.Throws<GeoDriveException>(() => _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "x", Paths = ["a"], Schedule = "0 25 * * *" }));
        Assert.Equal(ErrorIds.InvalidCron, bad.ErrorId);
        Assert.Contains("'25' is not a valid hour", bad.Message, StringComparison.Ordinal);
        Assert.Contains("minute hour day-of-month month day-of-week", bad.Remedy, StringComparison.Ordinal);

        var taken = Assert.Throws<GeoDriveException>(() => _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "Morning-Prewarm", Paths = ["a"], Schedule = "@daily" }));
        Assert.Equal(ErrorIds.RecallJobExists, taken.ErrorId);

        var zone = Assert.Throws<GeoDriveException>(() => _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "x", Paths = ["a"], Schedule = "@daily", TimeZone = "Mars/Olympus" }));
        Assert.Equal(ErrorIds.InvalidRequest, zone.ErrorId);

        var policyJob = Assert.Throws<GeoDriveException>(() => _rig.Engine.UnregisterRecallJob("morning-prewarm"));
        Assert.Equal(ErrorIds.RecallJobDeclaredInPolicy, policyJob.ErrorId);
        Assert.Contains("test-policy.yaml", policyJob.Remedy, StringComparison.Ordinal);
        Assert.Equal(ErrorIds.RecallJobNotFound, Assert.Throws<GeoDriveException>(() => _rig.Engine.UnregisterRecallJob("nope")).ErrorId);

        var daily = _rig.Engine.RegisterRecallJob(new RecallJobSpec { Name = "berlin", Paths = ["a"], Schedule = "@daily", TimeZone = "Europe/Berlin" });
        Assert.Equal(new DateTimeOffset(2026, 1, 5, 23, 0, 0, TimeSpan.Zero), daily.NextRunUtc); // midnight in Berlin (UTC+1)
        _rig.Engine.UnregisterRecallJob("BERLIN");
        Assert.DoesNotContain(_rig.Engine.RecallJobs(), j => j.Record.Name == "berlin");
    }

    [Fact]
    public async Task A_job_removed_from_the_policy_stops_and_one_added_by_a_reload_starts_from_now()
    {
        await StubsAsync(("Active/a.bin", 10_000), ("Other/c.bin", 10_000));
        _rig.UsePolicy(MorningPolicy.Replace("name: morning-prewarm, paths: [\"Active/**\"], schedule: \"0 6 * * 1-5\"", "name: evening, paths: [\"Other/**\"], schedule: \"0 18 * * *\"", StringComparison.Ordinal));
        Assert.Equal("evening", Assert.Single(_rig.Engine.RecallJobs()).Record.Name);

        await TickAtAsync(At(5, 17, 59));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Other/c.bin"));

        await TickAtAsync(At(5, 18));
        Assert.Equal(FileState.Cached, _rig.StateOf("Other/c.bin"));

        await TickAtAsync(At(6, 6));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("Active/a.bin")); // morning-prewarm left the policy
    }
}
