using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The bucket journal: deletes owed to the bucket survive a failed attempt and a restart, a rename to an
/// excluded name deletes the old object, and a multipart upload whose file changed is aborted, not completed.
/// The endpoint goes down through the fault proxy (a stand-in: no real server goes down on demand).
/// </summary>
public sealed class BucketJournalTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: journal-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
          excludes: [ "**/*.tmp" ]
        """;

    private static async Task UploadAllAsync(DriveRig rig)
    {
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
    }

    private static async Task StubbedAsync(DriveRig rig, string path, byte[] bytes)
    {
        await rig.WriteAsync(path, bytes);
        await UploadAllAsync(rig);
        await rig.Engine.StubAsync(path);
    }

    /// <summary>As the mount renames: on disk first, then the engine is told.</summary>
    private static void RenamedByMount(DriveRig rig, string from, string to)
    {
        File.Move(rig.Local(from), rig.Local(to));
        rig.Engine.Renamed(from, to, rig.Caller, isDirectory: false);
    }

    /// <summary>A long outage: each try fails, and the clock passes the backoff it set (2 s, 4 s, 8 s …) before the next.</summary>
    private static async Task FailThroughBackoffsAsync(DriveRig rig, int tries, Func<Task> attempt)
    {
        for (var i = 1; i <= tries; i++)
        {
            await attempt();
            rig.Clock.Advance(TimeSpan.FromSeconds((1 << i) + 1));
        }
    }

    /// <summary>
    /// Stops the endpoint, writes the file, fails through seven backoffs and tries once more, with a backoff (256 s) the clock
    /// does not pass. Stopped first: with settle 0 the close queues the upload at once, which could otherwise go through
    /// before the stop (it did, on a faster upload path).
    /// </summary>
    private static async Task BackOffThroughAnOutageAsync(DriveRig rig, FaultProxy proxy, string path, byte[] bytes)
    {
        proxy.Stop();
        await rig.WriteAsync(path, bytes);
        await FailThroughBackoffsAsync(rig, 7, () => UploadAllAsync(rig));
        await UploadAllAsync(rig);
    }

    private static void DeleteLocally(DriveRig rig, string path)
    {
        File.Delete(rig.Local(path));
        rig.Engine.Deleted(path, rig.Caller, isDirectory: false);
    }

    [Fact]
    public async Task A_delete_that_failed_while_the_endpoint_was_down_is_done_after_a_restart_and_the_file_never_comes_back()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        await rig.WriteAsync("gone.bin", DriveRig.RandomBytes(10_000, 1));
        await rig.WriteAsync("kept.bin", DriveRig.RandomBytes(10_000, 2));
        await UploadAllAsync(rig);
        Assert.NotNull(await rig.ObjectBytesAsync("gone.bin"));

        proxy.Stop();
        DeleteLocally(rig, "gone.bin");
        await rig.Engine.TickAsync();
        Assert.Equal(1, rig.Engine.OwedBucketChangeCount);

        await rig.RestartAsync();
        proxy.Start();
        // A listing before the owed delete is done must not bring the file back as a stub.
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.False(File.Exists(rig.Local("gone.bin")));

        await rig.Engine.TickAsync();
        Assert.Null(await rig.ObjectBytesAsync("gone.bin"));
        Assert.NotNull(await rig.ObjectBytesAsync("kept.bin"));
        // Owed on through the late-write grace (the dead run's requests may still land), then done.
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.False(File.Exists(rig.Local("gone.bin")));
        await rig.PassLateWriteGraceAsync();
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_file_deleted_while_its_recall_waits_on_a_frozen_endpoint_is_forgotten_once_the_recall_gives_up()
    {
        // The recall that failed found its cache file gone, could not put the stub back, and left its outcome
        // unset: its worker then waited for it for ever, holding the file's lock, and the delete never ended.
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        await rig.WriteAsync("held.bin", DriveRig.RandomBytes(30_000, 22));
        await UploadAllAsync(rig);
        await rig.Engine.StubAsync("held.bin");

        proxy.Freeze();
        var recall = Task.Run(async () => await rig.Engine.OpenAsync("held.bin", rig.Caller, OpenIntent.Read));
        Assert.True(SpinWait.SpinUntil(() => rig.Engine.RecallProgress("held.bin") is not null, TimeSpan.FromSeconds(30)), "the recall never started");
        File.Delete(rig.Local("held.bin"));
        proxy.Thaw();
        // It ends, either way: failed when the recall had not opened the file before the delete, else done through its
        // handle into the deleted file (what the process that opened it reads).
        await Record.ExceptionAsync(() => recall).WaitAsync(TimeSpan.FromSeconds(60));

        await Task.Run(() => rig.Engine.Deleted("held.bin", rig.Caller, isDirectory: false)).WaitAsync(TimeSpan.FromSeconds(30));
        await rig.Engine.TickAsync().WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Null(rig.Engine.GetFile("held.bin"));
        Assert.Null(await rig.ObjectBytesAsync("held.bin"));
    }

    [Fact]
    public async Task A_tick_between_a_delete_journaled_and_its_entry_forgotten_keeps_the_delete_owed_interleaving_forced_by_a_hooked_index()
    {
        // CI's crash seed 1677455724: a file deleted right after a restart left its object for ever. A tick looked
        // while the delete, journaled, was forgetting the entry: it found the file still in the index, took that
        // for "a file lives under the key again" and dropped the delete.
        await using var rig = new DriveRig(s3, SettleZero, hookedIndex: true);
        await rig.WriteAsync("gone.bin", DriveRig.RandomBytes(30_000, 21));
        await UploadAllAsync(rig);
        var ticked = false;
        rig.Hooks!.BeforeDelete = path =>
        {
            if (path == "gone.bin" && !ticked)
            {
                ticked = true;
                rig.Engine.TickAsync().GetAwaiter().GetResult();
            }
        };

        DeleteLocally(rig, "gone.bin");
        Assert.True(ticked);
        await rig.Engine.TickAsync();

        Assert.Null(await rig.ObjectBytesAsync("gone.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task An_owed_delete_that_failed_while_the_endpoint_was_down_goes_as_soon_as_the_endpoint_answers_again_not_after_its_backoff()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        await rig.WriteAsync("gone.bin", DriveRig.RandomBytes(10_000, 11));
        await UploadAllAsync(rig);

        proxy.Stop();
        DeleteLocally(rig, "gone.bin");
        // A long outage: each failed try doubles the wait before the next (2 s, 4 s, 8 s, 16 s …).
        await FailThroughBackoffsAsync(rig, 4, () => rig.Engine.TickAsync());
        await rig.Engine.TickAsync();
        Assert.Equal(1, rig.Engine.OwedBucketChangeCount);

        // The endpoint is back and answers an upload: what failed only because it was unreachable goes now.
        proxy.Start();
        await rig.WriteAsync("new.bin", DriveRig.RandomBytes(10_000, 12));
        await UploadAllAsync(rig);
        await rig.Engine.TickAsync();

        Assert.Null(await rig.ObjectBytesAsync("gone.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task Owed_deletes_that_failed_in_an_outage_try_the_endpoint_again_within_seconds_even_when_nothing_is_uploaded()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        await rig.WriteAsync("a.bin", DriveRig.RandomBytes(10_000, 15));
        await rig.WriteAsync("b.bin", DriveRig.RandomBytes(10_000, 16));
        await UploadAllAsync(rig);

        proxy.Stop();
        DeleteLocally(rig, "a.bin");
        DeleteLocally(rig, "b.bin");
        await FailThroughBackoffsAsync(rig, 5, () => rig.Engine.TickAsync());
        proxy.Start();
        // Well within the backoff reached (64 s), past the endpoint's try interval.
        rig.Clock.Advance(TimeSpan.FromSeconds(11));
        await rig.Engine.TickAsync();

        Assert.Null(await rig.ObjectBytesAsync("a.bin"));
        Assert.Null(await rig.ObjectBytesAsync("b.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// Many owed changes when the endpoint goes away: the first one's failure says so, and the rest wait for the endpoint
    /// untried. Before, every change of the batch asked the endpoint in turn (each for as long as a request's timeout, when
    /// it is frozen, with the tick's stubbing waiting behind them) and wrote an error line of its own: hundreds at once.
    /// </summary>
    [Fact]
    public async Task Owed_changes_in_an_outage_cost_one_try_and_one_error_line_per_tick_and_all_go_once_the_endpoint_answers()
    {
        const int Files = 20;
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        for (var i = 0; i < Files; i++)
        {
            await rig.WriteAsync($"f{i:D2}.bin", DriveRig.RandomBytes(1_000, 100 + i));
        }
        await UploadAllAsync(rig);
        var errorsBefore = rig.Engine.ReadEvents(kind: DriveEventKind.Error).Count;

        proxy.Stop();
        for (var i = 0; i < Files; i++)
        {
            DeleteLocally(rig, $"f{i:D2}.bin");
        }
        await rig.Engine.TickAsync();

        Assert.Equal(1, rig.Engine.ReadEvents(kind: DriveEventKind.Error).Count - errorsBefore);
        Assert.Equal(Files, rig.Engine.OwedBucketChangeCount);

        proxy.Start();
        rig.Clock.Advance(TimeSpan.FromSeconds(11));
        await rig.Engine.TickAsync();

        for (var i = 0; i < Files; i++)
        {
            Assert.Null(await rig.Store.HeadAsync($"f{i:D2}.bin"));
        }
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_file_whose_upload_failed_while_the_endpoint_was_down_goes_up_once_another_upload_went_through_not_after_its_backoff()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var waiting = DriveRig.RandomBytes(10_000, 13);
        proxy.Stop();
        await rig.WriteAsync("waiting.bin", waiting);
        await FailThroughBackoffsAsync(rig, 4, () => UploadAllAsync(rig));
        await UploadAllAsync(rig);
        Assert.Equal(FileState.Dirty, rig.StateOf("waiting.bin"));

        proxy.Start();
        await rig.WriteAsync("new.bin", DriveRig.RandomBytes(10_000, 14));
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(waiting, await rig.ObjectBytesAsync("waiting.bin"));
    }

    [Fact]
    public async Task A_file_whose_upload_failed_while_the_endpoint_was_down_tries_it_again_within_seconds_even_when_nothing_else_is_uploaded()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var waiting = DriveRig.RandomBytes(10_000, 17);
        proxy.Stop();
        await rig.WriteAsync("waiting.bin", waiting);
        await FailThroughBackoffsAsync(rig, 5, () => UploadAllAsync(rig));
        await UploadAllAsync(rig);
        Assert.Equal(FileState.Dirty, rig.StateOf("waiting.bin"));

        proxy.Start();
        // Well within the backoff reached (64 s), past the endpoint's try interval; nothing else goes up.
        rig.Clock.Advance(TimeSpan.FromSeconds(11));
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(waiting, await rig.ObjectBytesAsync("waiting.bin"));
        Assert.Equal(FileState.Cached, rig.StateOf("waiting.bin"));
    }

    /// <summary>
    /// Soak, 4 lanes, lane 2, round 2: five files that had failed only because the endpoint was down stayed Dirty for
    /// 40 s after it came back. The file tried first answered without going up, so the rest waited out their backoff.
    /// </summary>
    [Fact]
    public async Task Files_waiting_for_the_endpoint_go_once_it_answers_even_when_the_file_tried_first_is_refused_by_a_store_that_fails_its_put()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint, storeInFront: inner => new FailingPut(inner, "a-first.bin"));
        proxy.Stop();
        await rig.WriteAsync("a-first.bin", DriveRig.RandomBytes(10_000, 21));
        var second = DriveRig.RandomBytes(10_000, 22);
        await rig.WriteAsync("b-second.bin", second);
        await FailThroughBackoffsAsync(rig, 5, () => UploadAllAsync(rig));
        // One more try, whose backoff (64 s) the clock does not pass.
        await UploadAllAsync(rig);
        Assert.Equal((FileState.Dirty, FileState.Dirty), (rig.StateOf("a-first.bin"), rig.StateOf("b-second.bin")));

        proxy.Start();
        // Past the endpoint's try interval, well within the backoff reached (64 s): a-first.bin is tried, the
        // bucket answers its HEAD, and its PUT fails on the server's side.
        rig.Clock.Advance(TimeSpan.FromSeconds(11));
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(second, await rig.ObjectBytesAsync("b-second.bin"));
        Assert.Equal(FileState.Cached, rig.StateOf("b-second.bin"));
        Assert.Equal(FileState.Dirty, rig.StateOf("a-first.bin"));
    }

    /// <summary>
    /// Soak, 4 lanes, lanes 2 and 3 (seed 373684314, round 9): files Dirty 90 s after an outage that a kill -9 had
    /// cut through. Which files waited only for the endpoint is known in memory only; after the restart they waited
    /// out backoffs grown during the outage (up to MaxRetryDelay, 5 min).
    /// </summary>
    [Fact]
    public async Task A_file_that_backed_off_during_an_outage_goes_at_once_after_a_restart_once_the_endpoint_answers()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(10_000, 23);
        await BackOffThroughAnOutageAsync(rig, proxy, "outage.bin", bytes);
        Assert.Equal(FileState.Dirty, rig.StateOf("outage.bin"));

        await rig.RestartAsync();
        proxy.Start();
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Cached, rig.StateOf("outage.bin"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("outage.bin"));
    }

    /// <summary>
    /// Soak, 4 lanes, lanes 2 (seed 1392919649, round 1) and 3 (seed 610812950, round 15): the kill -9 landed while
    /// such a file's next try was under way, so the index said Uploading, with the backoff of the try before. Recovery
    /// made it Dirty again but kept that backoff (up to 5 min), and it was not tried within the 90 s settle.
    /// </summary>
    [Fact]
    public async Task A_file_whose_upload_a_kill_cut_short_after_backoffs_goes_at_once_after_a_restart()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(10_000, 24);
        await BackOffThroughAnOutageAsync(rig, proxy, "cut.bin", bytes);
        // The next try had started when the kill came: its Uploading reached the index, its end did not.
        var entry = rig.Index.Get("cut.bin")!;
        Assert.True(entry.NextAttemptUtc > rig.Clock.UtcNow.AddMinutes(1), $"backoff until {entry.NextAttemptUtc}");
        entry.State = FileState.Uploading;
        rig.Index.Put(entry);

        var report = await rig.RestartAsync();
        proxy.Start();
        await UploadAllAsync(rig);

        Assert.Equal(1, report.UploadsResumed);
        Assert.Equal(FileState.Cached, rig.StateOf("cut.bin"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("cut.bin"));
    }

    /// <summary>The real store, whose PUTs of one key fail as a server's 500 would (no real part fails one key at will).</summary>
    private sealed class FailingPut(Core.Ports.IObjectStore inner, string key) : ForwardingStore(inner)
    {
        public override Task<ObjectInfo> PutAsync(string putKey, Stream content, long length, IReadOnlyDictionary<string, string> metadata,
            Core.Ports.IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default) =>
            putKey == key
                ? throw new GeoDriveException(ErrorIds.StoreError, ErrorKind.ResourceUnavailable, $"The S3 server failed on '{key}': 500 InternalError (the test's store).", "None: a test.")
                : base.PutAsync(putKey, content, length, metadata, observer, condition, contentSha256, cancellationToken);
    }

    [Fact]
    public async Task A_file_renamed_to_an_excluded_name_stays_local_and_its_old_object_is_deleted()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(10_000, 3);
        await rig.WriteAsync("report.docx", bytes);
        await UploadAllAsync(rig);

        File.Move(rig.Local("report.docx"), rig.Local("report.tmp"));
        rig.Engine.Renamed("report.docx", "report.tmp", rig.Caller, isDirectory: false);
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Excluded, rig.StateOf("report.tmp"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("report.tmp")));
        Assert.Null(await rig.ObjectBytesAsync("report.docx"));
        Assert.Null(await rig.ObjectBytesAsync("report.tmp"));
    }

    [Fact]
    public async Task A_stub_renamed_to_an_excluded_name_comes_home_stays_local_and_neither_name_stays_in_the_bucket()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(20_000, 6);
        await StubbedAsync(rig, "notes.txt", bytes);

        RenamedByMount(rig, "notes.txt", "notes.tmp");
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Excluded, rig.StateOf("notes.tmp"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("notes.tmp")));
        Assert.Null(await rig.ObjectBytesAsync("notes.txt"));
        Assert.Null(await rig.ObjectBytesAsync("notes.tmp"));
    }

    [Fact]
    public async Task A_stub_renamed_to_an_excluded_name_whose_folder_moves_on_disk_before_it_came_home_comes_home_under_the_new_folder_and_the_tick_goes_on()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(20_000, 23);
        await StubbedAsync(rig, "old/notes.txt", bytes);
        RenamedByMount(rig, "old/notes.txt", "old/notes.tmp");

        // The mount renames on disk before it tells the engine (soak seed 999081977): the tick's recall finds no file.
        Directory.Move(rig.Local("old"), rig.Local("new"));
        await rig.Engine.TickAsync();
        rig.Engine.Renamed("old", "new", rig.Caller, isDirectory: true);
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Excluded, rig.StateOf("new/notes.tmp"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("new/notes.tmp")));
        Assert.Null(await rig.ObjectBytesAsync("old/notes.txt"));
    }

    [Fact]
    public async Task A_stub_renamed_to_an_excluded_name_that_is_written_right_after_it_came_home_leaves_no_old_object()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        await StubbedAsync(rig, "notes.txt", DriveRig.RandomBytes(20_000, 18));
        RenamedByMount(rig, "notes.txt", "notes.tmp");
        // One tick brings it home (its bytes come from the old key); before its upload looks at it, it is written.
        await rig.Engine.TickAsync();
        var written = DriveRig.RandomBytes(5_000, 19);
        await File.WriteAllBytesAsync(rig.Local("notes.tmp"), written);
        await rig.Engine.ClosedAsync("notes.tmp", rig.Caller, modified: true);
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Excluded, rig.StateOf("notes.tmp"));
        Assert.Equal(written, await File.ReadAllBytesAsync(rig.Local("notes.tmp")));
        Assert.Null(await rig.ObjectBytesAsync("notes.txt"));
        Assert.Null(await rig.ObjectBytesAsync("notes.tmp"));
    }

    [Fact]
    public async Task A_stub_renamed_to_an_excluded_name_then_a_restart_before_it_came_home_puts_no_excluded_name_in_the_bucket()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(20_000, 9);
        await StubbedAsync(rig, "notes.txt", bytes);

        // The endpoint is down: the stub cannot come home before the service stops.
        proxy.Stop();
        RenamedByMount(rig, "notes.txt", "notes.tmp");
        await rig.RestartAsync();
        // Nothing is owed to the bucket for a name kept local (Get-CloudDriveStatus: Owed 0), no copy to it above all:
        // a copy that landed before the stub came home made the excluded name an object that stayed.
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
        proxy.Start();
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(FileState.Excluded, rig.StateOf("notes.tmp"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("notes.tmp")));
        Assert.Null(await rig.ObjectBytesAsync("notes.tmp"));
        Assert.Null(await rig.ObjectBytesAsync("notes.txt"));
    }

    private const string MultipartAt5MiB = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: journal-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
          transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }
        """;

    // The same, but nothing goes up until the test asks: no pipeline upload races the one the test makes and checks.
    private static readonly string MultipartAt5MiBUploadedOnRequest = MultipartAt5MiB.Replace("settle: 0s", "settle: 1h", StringComparison.Ordinal);

    private static bool StartsMultipart(string requestHead) =>
        requestHead.StartsWith("POST ", StringComparison.Ordinal) && requestHead.Split("\r\n")[0].Contains("?uploads", StringComparison.Ordinal);

    private static bool CopiesAnObject(string requestHead) =>
        requestHead.Contains("x-amz-copy-source:", StringComparison.OrdinalIgnoreCase);

    [Fact]
    public async Task A_copy_the_server_made_though_its_answer_was_lost_leaves_no_object_once_the_file_moved_on()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(10_000, 17);
        await rig.WriteAsync("a.bin", bytes);
        await UploadAllAsync(rig);

        // Renamed clean: the bucket copies a.bin to b.bin; the server does, and every answer is lost.
        File.Move(rig.Local("a.bin"), rig.Local("b.bin"));
        rig.Engine.Renamed("a.bin", "b.bin", rig.Caller, isDirectory: false);
        proxy.LoseReplies(int.MaxValue, CopiesAnObject);
        await rig.Engine.TickAsync();
        Assert.NotNull(await rig.ObjectBytesAsync("b.bin"));

        // Renamed again before that copy was ever acknowledged.
        File.Move(rig.Local("b.bin"), rig.Local("c.bin"));
        rig.Engine.Renamed("b.bin", "c.bin", rig.Caller, isDirectory: false);
        proxy.LoseReplies(0, CopiesAnObject);
        for (var i = 0; i < 4; i++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(6));
            await rig.Engine.TickAsync();
        }

        Assert.Equal(bytes, await rig.ObjectBytesAsync("c.bin"));
        Assert.Null(await rig.ObjectBytesAsync("b.bin"));
        Assert.Null(await rig.ObjectBytesAsync("a.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_copy_the_server_made_as_the_service_was_killed_leaves_no_object_once_the_file_moved_on_after_the_restart()
    {
        // Crash seed 2093859296: a renamed file's copy went out, the server made it, and the service died before it
        // heard or recorded a try. After the restart the file moved on (a folder rename) and the copy, journaled as
        // never tried, was dropped: its object stayed for ever.
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(10_000, 18);
        await rig.WriteAsync("a.bin", bytes);
        await UploadAllAsync(rig);
        File.Move(rig.Local("a.bin"), rig.Local("b.bin"));
        rig.Engine.Renamed("a.bin", "b.bin", rig.Caller, isDirectory: false);

        // The copy the dying run sent, made by the server (the test sends it: a kill between request and record is not
        // something a test can time).
        await rig.S3.Client.CopyObjectAsync(rig.Bucket, "a.bin", rig.Bucket, "b.bin");
        await rig.RestartAsync();
        File.Move(rig.Local("b.bin"), rig.Local("c.bin"));
        rig.Engine.Renamed("b.bin", "c.bin", rig.Caller, isDirectory: false);
        await UploadAllAsync(rig);
        await UploadAllAsync(rig);

        Assert.Equal(bytes, await rig.ObjectBytesAsync("c.bin"));
        Assert.Null(await rig.ObjectBytesAsync("b.bin"));
        Assert.Null(await rig.ObjectBytesAsync("a.bin"));
        // The deletes owed for the copy the killed run sent stay owed through the late-write grace, then are done.
        await rig.PassLateWriteGraceAsync();
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_multipart_start_whose_reply_was_lost_leaves_no_upload_open_once_the_file_is_uploaded()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, MultipartAt5MiB, multipartThreshold: 5L << 20, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(6 << 20, 7);
        // The server starts an upload, its answer is lost, the client asks again and gets a second one (set before
        // the write: its close queues the upload at once).
        proxy.LoseReplies(1, StartsMultipart);
        await rig.WriteAsync("scan.tif", bytes);

        await UploadAllAsync(rig);
        await rig.Engine.TickAsync();

        Assert.Equal(1, proxy.RepliesLost);
        Assert.Equal(bytes, await rig.ObjectBytesAsync("scan.tif"));
        Assert.Empty(await rig.Store.ListOpenMultipartUploadsAsync());
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_multipart_start_that_never_got_a_reply_is_aborted_after_a_restart_and_the_file_uploaded()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, MultipartAt5MiBUploadedOnRequest, multipartThreshold: 5L << 20, endpoint: proxy.Endpoint);
        var bytes = DriveRig.RandomBytes(6 << 20, 8);
        await rig.WriteAsync("scan.tif", bytes);
        // Every try starts an upload on the server and none of them hears back: the engine never learns an id.
        proxy.LoseReplies(int.MaxValue, StartsMultipart);
        // One upload, no tick after it: the service stops before it settles anything (as a crash would).
        await Assert.ThrowsAnyAsync<Exception>(() => rig.Engine.UploadAsync("scan.tif"));
        Assert.Equal(FileState.Dirty, rig.StateOf("scan.tif"));
        Assert.NotEmpty(await rig.Store.ListOpenMultipartUploadsAsync());
        Assert.NotEqual(0, rig.Engine.OwedBucketChangeCount);

        proxy.LoseReplies(0, StartsMultipart);
        await rig.RestartAsync();
        await rig.Engine.TickAsync();
        Assert.Empty(await rig.Store.ListOpenMultipartUploadsAsync());

        await rig.Engine.UploadAsync("scan.tif");
        await rig.Engine.TickAsync();
        Assert.Equal(bytes, await rig.ObjectBytesAsync("scan.tif"));
        Assert.Empty(await rig.Store.ListOpenMultipartUploadsAsync());
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_multipart_upload_whose_file_changed_while_its_parts_went_up_is_aborted_never_completed()
    {
        const string path = "video.bin";
        ChangingStore changing = null!;
        await using var rig = new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: journal-tests }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 1h }
              transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }
            """, multipartThreshold: 5L << 20, storeInFront: s => changing = new ChangingStore(s));
        var before = DriveRig.RandomBytes(12 << 20, 4);
        var after = DriveRig.RandomBytes(12 << 20, 5);
        await rig.WriteAsync(path, before);
        // An application writes the file while its parts are being sent (the write lands in the cache
        // file; the engine hears of it only at its close).
        changing.BeforePut = () => File.WriteAllBytes(rig.Local(path), after);

        await rig.Engine.UploadAsync(path);

        // Whatever the bucket shows under the key is one whole version, whose bytes match its own checksum.
        var head = await rig.Store.HeadAsync(path);
        if (head is not null)
        {
            var inBucket = (await rig.ObjectBytesAsync(path))!;
            Assert.Equal(head.Metadata[ObjectLayout.Sha256Key], Convert.ToHexStringLower(SHA256.HashData(inBucket)));
        }
        Assert.Empty(await rig.Store.ListOpenMultipartUploadsAsync());
        Assert.Equal(FileState.Dirty, rig.StateOf(path));

        changing.BeforePut = null;
        await rig.Engine.ClosedAsync(path, rig.Caller, modified: true);
        await rig.Engine.UploadAsync(path);
        Assert.Equal(after, await rig.ObjectBytesAsync(path));
        // Each upload's journal record is settled at the next tick, once nothing is left open under the key.
        await rig.Engine.TickAsync();
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>Runs a test's action as a PUT begins, after the engine hashed the file (fault injection: a write racing the upload).</summary>
    private sealed class ChangingStore(IObjectStore inner) : ForwardingStore(inner)
    {
        public Action? BeforePut { get; set; }

        public override Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default)
        {
            BeforePut?.Invoke();
            return base.PutAsync(key, content, length, metadata, observer, condition, contentSha256, cancellationToken);
        }
    }
}
