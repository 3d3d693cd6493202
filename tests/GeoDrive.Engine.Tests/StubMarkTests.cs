using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A stub carries its own mark (an xattr on the cache file), so neither a lost index, a crash between a
/// rename on disk and in the index, nor a truncation that never happened can make its zeros look like
/// data; bytes written into a stub while the service was down are kept; and a clean file whose object
/// another site replaced follows the bucket when it is stubbed.
/// </summary>
public sealed class StubMarkTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private static Task<byte[]> StubbedFileAsync(DriveRig rig, string path, int size, int seed) => rig.StubbedAsync(path, size, seed);

    private static async Task SettleAsync(DriveRig rig)
    {
        rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
    }

    /// <summary>As an administrator who follows "move .geodrive aside" does: the index is gone, the cache stays.</summary>
    private static async Task RestartWithoutIndexAsync(DriveRig rig)
    {
        await rig.Engine.DisposeAsync();
        rig.Index.Dispose();
        Directory.Move(rig.StatePath, rig.StatePath + ".aside");
        await rig.RestartAsync();
    }

    [Fact]
    public async Task A_lost_index_takes_marked_stubs_for_stubs_and_never_uploads_their_zeros_over_their_objects()
    {
        await using var rig = new DriveRig(s3);
        var stubbed = await StubbedFileAsync(rig, "scans/a.tif", 100_000, 1);
        var cached = DriveRig.RandomBytes(5_000, 2);
        await rig.WriteAsync("notes.txt", cached);
        await rig.Engine.UploadAsync("notes.txt");

        await RestartWithoutIndexAsync(rig);
        await SettleAsync(rig);

        Assert.Equal(FileState.Stubbed, rig.StateOf("scans/a.tif"));
        Assert.Equal(stubbed, await rig.ObjectBytesAsync("scans/a.tif"));
        Assert.Equal(stubbed, await rig.ReadAsync("scans/a.tif"));
        Assert.Equal(cached, await rig.ObjectBytesAsync("notes.txt"));
    }

    [Fact]
    public async Task A_stub_renamed_on_disk_but_not_in_the_index_before_a_crash_is_a_stub_under_its_new_name_and_its_object_follows()
    {
        await using var rig = new DriveRig(s3);
        var bytes = await StubbedFileAsync(rig, "old.bin", 50_000, 3);

        // The mount renamed the cache file; the process died before the engine heard of it.
        await rig.Engine.DisposeAsync();
        File.Move(rig.Local("old.bin"), rig.Local("new.bin"));
        await rig.RestartAsync();
        await SettleAsync(rig);
        await SettleAsync(rig);

        Assert.Null(rig.Engine.GetFile("old.bin"));
        Assert.Equal(FileState.Stubbed, rig.StateOf("new.bin"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("new.bin"));
        Assert.Null(await rig.ObjectBytesAsync("old.bin"));
        Assert.Equal(bytes, await rig.ReadAsync("new.bin"));
    }

    /// <summary>
    /// Issue 11's sequence 7: a recalled file's bytes are on the disk before the index records it Cached (a power cut
    /// after that must not leave a "Cached" file of zeros). At the moment the entry is written Cached, the kernel's page
    /// cache (cachestat) holds no page of the file that is still dirty or under writeback. Without the recall's fsync,
    /// 1,024 pages were.
    /// </summary>
    [Fact]
    public async Task A_recalled_file_keeps_its_recall_mark_until_its_bytes_are_on_disk_moment_caught_by_a_hooked_index()
    {
        await using var rig = new DriveRig(s3, hookedIndex: true);
        var bytes = await StubbedFileAsync(rig, "scan.tif", 4 << 20, 17);
        bool? markedWhenCached = null;
        rig.Hooks!.BeforePut = entry =>
        {
            if (entry is { Path: "scan.tif", State: FileState.Cached })
            {
                markedWhenCached ??= StubMark.Read(rig.Local("scan.tif"))?.Recalling;
            }
        };

        await rig.Engine.RecallAsync("scan.tif");
        await rig.Engine.RecallFlushes.WhenEmptyAsync();

        // Recorded Cached before its flush (ADR 0031), so a restart in between takes it for an interrupted recall; the mark
        // goes once the bytes are on disk.
        Assert.True(markedWhenCached);
        Assert.Null(StubMark.Read(rig.Local("scan.tif")));
        Assert.Equal(0, PageCache.PagesNotOnDisk(rig.Local("scan.tif")));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("scan.tif")));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_stub_whose_time_alone_changed_while_the_service_was_down_is_a_stub_with_that_time_and_no_conflict_copy(bool indexLost)
    {
        await using var rig = new DriveRig(s3);
        var bytes = await StubbedFileAsync(rig, "minutes.docx", 30_000, 5);
        var touched = new DateTime(2024, 2, 3, 4, 5, 6, DateTimeKind.Utc);

        // A touch told to the engine just before a crash (its mark not yet written), or straight in the cache: no byte written.
        await rig.Engine.DisposeAsync();
        File.SetLastWriteTimeUtc(rig.Local("minutes.docx"), touched);
        if (indexLost)
        {
            await RestartWithoutIndexAsync(rig);
        }
        else
        {
            await rig.RestartAsync();
        }
        await SettleAsync(rig);

        Assert.Equal(["minutes.docx"], Directory.GetFiles(rig.CachePath).Select(Path.GetFileName));
        Assert.DoesNotContain(rig.Engine.ReadEvents(), e => e.Kind == DriveEventKind.Conflict);
        Assert.Equal(FileState.Stubbed, rig.StateOf("minutes.docx"));
        Assert.Equal(touched, rig.Engine.GetFile("minutes.docx")!.ModifiedUtc.UtcDateTime);
        Assert.Equal(bytes, await rig.ReadAsync("minutes.docx"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("minutes.docx"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Bytes_written_into_a_stub_while_the_service_was_down_are_kept_beside_it_and_the_stub_stays(bool sizeChanged)
    {
        await using var rig = new DriveRig(s3);
        var bytes = await StubbedFileAsync(rig, "report.docx", 40_000, 4);
        var written = "written while nobody watched"u8.ToArray();

        await rig.Engine.DisposeAsync();
        // Over its first bytes (the same size), or appended (issue 11's sequence 13: the size changed).
        await using (var file = new FileStream(rig.Local("report.docx"), sizeChanged ? FileMode.Append : FileMode.Open, FileAccess.Write))
        {
            await file.WriteAsync(written);
        }
        await rig.RestartAsync();
        await SettleAsync(rig);

        var kept = Assert.Single(rig.Engine.FindFiles("report (conflict *).docx"));
        var keptBytes = await File.ReadAllBytesAsync(rig.Local(kept.Path));
        Assert.Equal(bytes.Length + (sizeChanged ? written.Length : 0), keptBytes.Length);
        Assert.Equal(written, sizeChanged ? keptBytes[^written.Length..] : keptBytes[..written.Length]);
        Assert.Equal(keptBytes, await rig.ObjectBytesAsync(kept.Path));
        Assert.Equal(FileState.Stubbed, rig.StateOf("report.docx"));
        Assert.Equal(bytes, await rig.ReadAsync("report.docx"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("report.docx"));
        Assert.Contains(rig.Engine.ReadEvents(kind: DriveEventKind.Conflict), e => e.Path == "report.docx");
    }

    [Fact]
    public async Task A_truncating_open_of_a_stub_whose_truncation_failed_uploads_no_zeros_stand_in_for_the_failed_open()
    {
        await using var rig = new DriveRig(s3);
        var bytes = await StubbedFileAsync(rig, "data.bin", 30_000, 5);

        // open(O_TRUNC): the engine hears of it; the front end's own open then fails (EMFILE, EIO) and
        // the file is left as it was. The stand-in: nothing is truncated.
        await rig.Engine.OpenAsync("data.bin", rig.Caller, OpenIntent.Truncate);
        await rig.Engine.ClosedAsync("data.bin", rig.Caller, modified: false);
        await SettleAsync(rig);

        Assert.Equal(bytes, await rig.ObjectBytesAsync("data.bin"));
        Assert.Equal(FileState.Stubbed, rig.StateOf("data.bin"));
        Assert.Contains(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.ErrorId == ErrorIds.StubNotData);
        Assert.Equal(bytes, await rig.ReadAsync("data.bin"));
    }

    [Fact]
    public async Task A_clean_file_whose_object_another_site_replaced_becomes_a_stub_of_that_version_when_stubbed_and_nothing_is_uploaded()
    {
        await using var rig = new DriveRig(s3);
        await rig.WriteAsync("plan.txt", "ours"u8.ToArray());
        await rig.Engine.UploadAsync("plan.txt");
        await rig.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "plan.txt", ContentBody = "theirs, newer" });

        var entry = await rig.Engine.StubAsync("plan.txt");
        await SettleAsync(rig);

        Assert.Equal(FileState.Stubbed, entry.State);
        Assert.Equal("theirs, newer"u8.ToArray(), await rig.ObjectBytesAsync("plan.txt"));
        Assert.Equal("theirs, newer"u8.ToArray(), await rig.ReadAsync("plan.txt"));
    }

    /// <summary>
    /// The mount renames on disk first and tells the engine after: a folder renamed while a recall of a file in it
    /// is in flight moves the cache file under the recall (soak seed 999081977). The hooked store names the moment:
    /// the folder moves when the first range is asked for, as the mount would.
    /// </summary>
    private async Task<(DriveRig Rig, MovingStore Store, byte[] Bytes)> StubInAFolderRenamedMidRecallAsync(int size, int seed)
    {
        MovingStore store = null!;
        var rig = new DriveRig(s3, DriveRig.FiveMiBRangesOneAtATime, multipartThreshold: 5L << 20, storeInFront: s => store = new MovingStore(s));
        var bytes = await StubbedFileAsync(rig, "old/a.bin", size, seed);
        store.OnFirstGet = () => Directory.Move(rig.Local("old"), rig.Local("new"));
        return (rig, store, bytes);
    }

    [Fact]
    public async Task A_stub_whose_folder_is_renamed_on_disk_while_its_recall_completes_ends_Cached_with_its_bytes_and_no_conflict_copy_after_a_restart_moment_forced_by_a_hooked_store()
    {
        var (rig, _, bytes) = await StubInAFolderRenamedMidRecallAsync(10 << 20, 21);
        await using var _ = rig;

        await Record.ExceptionAsync(() => rig.Engine.RecallAsync("old/a.bin"));
        rig.Engine.Renamed("old", "new", rig.Caller, isDirectory: true);

        Assert.Equal(FileState.Cached, rig.StateOf("new/a.bin"));
        Assert.Null(StubMark.Read(rig.Local("new/a.bin")));
        await rig.RestartAsync();
        await SettleAsync(rig);
        Assert.Equal(["a.bin"], Directory.GetFiles(rig.Local("new")).Select(Path.GetFileName));
        Assert.Equal(bytes, await rig.ReadAsync("new/a.bin"));
    }

    [Fact]
    public async Task A_stub_whose_folder_is_renamed_on_disk_while_its_recall_fails_is_a_stub_again_and_no_conflict_copy_after_a_restart_moment_forced_by_a_hooked_store()
    {
        var (rig, store, bytes) = await StubInAFolderRenamedMidRecallAsync(10 << 20, 22);
        await using var _ = rig;
        store.FailAfterFirstGet = true;

        await Record.ExceptionAsync(() => rig.Engine.RecallAsync("old/a.bin"));
        rig.Engine.Renamed("old", "new", rig.Caller, isDirectory: true);

        Assert.Equal(FileState.Stubbed, rig.StateOf("new/a.bin"));
        Assert.True(StubMark.Read(rig.Local("new/a.bin"))?.IsPlaceholder(LocalFile.Read(rig.Local("new/a.bin"))!.Value), "the recall's first bytes were left in a marked file");
        Assert.Equal(0, rig.AllocatedBlocks("new/a.bin"));
        store.FailAfterFirstGet = false;
        await rig.RestartAsync();
        await SettleAsync(rig);
        Assert.Equal(["a.bin"], Directory.GetFiles(rig.Local("new")).Select(Path.GetFileName));
        Assert.Equal(bytes, await rig.ReadAsync("new/a.bin"));
    }

    /// <summary>Runs <see cref="OnFirstGet"/> before the first ranged GET; then, if asked, fails every later one as an outage would.</summary>
    private sealed class MovingStore(IObjectStore inner) : ForwardingStore(inner)
    {
        private int _gets;

        public Action? OnFirstGet { get; set; }

        public bool FailAfterFirstGet { get; set; }

        public override async Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
        {
            var first = Interlocked.Increment(ref _gets) == 1;
            if (first)
            {
                OnFirstGet?.Invoke();
            }
            else if (FailAfterFirstGet)
            {
                throw new GeoDriveException(ErrorIds.EndpointUnreachable, ErrorKind.ResourceUnavailable, "The S3 endpoint cannot be reached (stand-in).", "None: a test.");
            }
            return await base.GetAsync(key, destination, offset, length, expected, cancellationToken);
        }
    }

    [Fact]
    public async Task A_stub_carries_its_mark_and_a_recalled_file_does_not()
    {
        await using var rig = new DriveRig(s3);
        await StubbedFileAsync(rig, "m.bin", 1_000, 6);
        Assert.Equal(new StubMark(1_000, rig.Engine.GetFile("m.bin")!.ModifiedUtc, null, StubMark.HashOf("m.bin")), StubMark.Read(rig.Local("m.bin")));
        Assert.Equal(0, rig.AllocatedBlocks("m.bin"));

        await rig.ReadAsync("m.bin");
        await rig.Engine.RecallFlushes.WhenEmptyAsync();

        Assert.Null(StubMark.Read(rig.Local("m.bin")));
    }
}
