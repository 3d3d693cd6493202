using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A renamed clean file is copied in the bucket (server side), never uploaded again: its object appears under
/// the new key with the file's own metadata, the old key goes, a stub stays a stub, and nothing is lost on the way.
/// </summary>
public sealed class ServerSideRenameTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: rename-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    private static async Task SettleAsync(DriveRig rig)
    {
        for (var i = 0; i < 3; i++)
        {
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();
        }
    }

    private static void Rename(DriveRig rig, string from, string to)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(rig.Local(to))!);
        if (Directory.Exists(rig.Local(from)))
        {
            Directory.Move(rig.Local(from), rig.Local(to));
            rig.Engine.Renamed(from, to, rig.Caller, isDirectory: true);
        }
        else
        {
            // Over an existing file, as rename(2) does.
            File.Move(rig.Local(from), rig.Local(to), overwrite: true);
            rig.Engine.Renamed(from, to, rig.Caller, isDirectory: false);
        }
    }

    /// <summary>The files written and settled (uploaded); then <paramref name="stubbed"/> stubbed when the test is about stubs.</summary>
    private static async Task WriteSettledAsync(DriveRig rig, FileState state, string stubbed, params (string Path, byte[] Bytes)[] files)
    {
        foreach (var (path, bytes) in files)
        {
            await rig.WriteAsync(path, bytes);
        }
        await SettleAsync(rig);
        if (state == FileState.Stubbed)
        {
            await rig.Engine.StubAsync(stubbed);
        }
    }

    /// <summary>The bucket holds <paramref name="bytes"/> under <paramref name="key"/> and nothing under <paramref name="gone"/>, the drive reads them, nothing is owed.</summary>
    private static async Task AssertOnlyAsync(DriveRig rig, string key, byte[] bytes, params string[] gone)
    {
        Assert.Equal(bytes, await rig.ObjectBytesAsync(key));
        foreach (var other in gone)
        {
            Assert.Null(await rig.Store.HeadAsync(other));
        }
        Assert.Equal(bytes, await rig.ReadAsync(key));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>Another site or tool writes <paramref name="key"/> (an object with no site of this drive).</summary>
    private static Task PutAsAnotherSiteAsync(DriveRig rig, string key, byte[] bytes) =>
        rig.S3.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest { BucketName = rig.Bucket, Key = key, InputStream = new MemoryStream(bytes) });

    private static int Uploads(DriveRig rig) => rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count;

    [Fact]
    public async Task A_renamed_Cached_file_is_copied_in_the_bucket_stays_Cached_and_its_old_object_goes()
    {
        await using var rig = new DriveRig(s3, Policy);
        var bytes = DriveRig.RandomBytes(50_000, 1);
        await rig.WriteAsync("draft.docx", bytes);
        await SettleAsync(rig);
        var uploads = Uploads(rig);

        Rename(rig, "draft.docx", "final.docx");
        Assert.Equal(FileState.Cached, rig.StateOf("final.docx"));
        await SettleAsync(rig);

        Assert.Equal(FileState.Cached, rig.StateOf("final.docx"));
        Assert.Equal(uploads, Uploads(rig));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("final.docx"));
        Assert.Null(await rig.ObjectBytesAsync("draft.docx"));
        Assert.Equal("final.docx", rig.Engine.GetFile("final.docx")!.ObjectKey);
        Assert.Equal(rig.Engine.GetFile("final.docx")!.Checksum, (await rig.Store.HeadAsync("final.docx"))!.Metadata[ObjectLayout.Sha256Key]);
        // The copy's metadata keeps the fast check of the same bytes (issue 13), and so does the entry.
        Assert.Equal(Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(bytes)), (await rig.Store.HeadAsync("final.docx"))!.Metadata[ObjectLayout.Xxh128Key]);
        Assert.Equal(Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(bytes)), rig.Engine.GetFile("final.docx")!.Xxh128);
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_renamed_stub_is_copied_in_the_bucket_stays_a_stub_and_recalls_its_bytes_from_the_new_key()
    {
        await using var rig = new DriveRig(s3, Policy);
        var bytes = DriveRig.RandomBytes(80_000, 2);
        await rig.WriteAsync("scans/a.tif", bytes);
        await SettleAsync(rig);
        await rig.Engine.StubAsync("scans/a.tif");
        var uploads = Uploads(rig);

        Rename(rig, "scans", "archive/scans");
        await SettleAsync(rig);

        Assert.Equal(FileState.Stubbed, rig.StateOf("archive/scans/a.tif"));
        Assert.Null(await rig.ObjectBytesAsync("scans/a.tif"));
        Assert.Equal(bytes, await rig.ReadAsync("archive/scans/a.tif"));
        Assert.Equal(FileState.Cached, rig.StateOf("archive/scans/a.tif"));
        Assert.Equal(uploads, Uploads(rig));
    }

    /// <summary>
    /// Soak seed 356002439: a file whose version another site wrote is renamed away (its copy still owed), and a
    /// changed file is renamed onto the name it left. The object under that key is the version this drive moved
    /// away, not a change made elsewhere: the upload replaces it (after the moved file's bytes are safe), with no
    /// conflict copy, and the changed file's old key goes. Before, its upload took that version for another
    /// site's edit: a conflict copy no user made, and the old key stayed in the bucket for good.
    /// </summary>
    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task A_changed_file_renamed_onto_a_name_whose_file_was_just_renamed_away_replaces_its_object_without_a_conflict(FileState moved)
    {
        // Uploads wait for their settle (30 s on the rig's clock): nothing goes up between the renames.
        await using var rig = new DriveRig(s3);
        var theirs = "written by another site, synced here"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "a.bin", theirs);
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.Equal(FileState.Stubbed, rig.StateOf("a.bin"));
        if (moved == FileState.Cached)
        {
            Assert.Equal(theirs, await rig.ReadAsync("a.bin"));
        }
        Assert.Equal(moved, rig.StateOf("a.bin"));
        await rig.WriteAsync("b.bin", "b, first"u8.ToArray());
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("b.bin")).State);
        var changed = DriveRig.RandomBytes(40_000, 3);
        await rig.WriteAsync("b.bin", changed);

        Rename(rig, "a.bin", "moved/a.bin");
        Rename(rig, "b.bin", "a.bin");
        // Settled twice: the moved file, brought home before a.bin's upload replaced its object, goes up after its own settle.
        for (var i = 0; i < 2; i++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
            await SettleAsync(rig);
        }

        Assert.Empty(rig.Engine.FindFiles("*conflict*"));
        Assert.Empty(rig.Engine.ReadEvents(kind: DriveEventKind.Conflict));
        Assert.Equal(changed, await rig.ObjectBytesAsync("a.bin"));
        Assert.Equal(theirs, await rig.ObjectBytesAsync("moved/a.bin"));
        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Equal(changed, await rig.ReadAsync("a.bin"));
        Assert.Equal(theirs, await rig.ReadAsync("moved/a.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// Soak seed 424208148: as above, but the moved file's copy is made and the service restarts before the changed file
    /// goes up. The version left under the name is kept in the changed file's entry; before, it was in memory only, and
    /// the upload took it for another site's change (a conflict copy no user made).
    /// </summary>
    [Fact]
    public async Task A_changed_file_renamed_onto_a_name_another_file_left_replaces_its_object_without_a_conflict_after_a_restart()
    {
        // Uploads wait for their settle (30 s on the rig's clock): only the moved file's copy is made before the restart.
        await using var rig = new DriveRig(s3);
        var theirs = "written by another site, synced here"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "a.bin", theirs);
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.Equal(theirs, await rig.ReadAsync("a.bin"));
        await rig.WriteAsync("b.bin", "b, first"u8.ToArray());
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("b.bin")).State);
        var changed = DriveRig.RandomBytes(40_000, 19);
        await rig.WriteAsync("b.bin", changed);

        Rename(rig, "a.bin", "moved/a.bin");
        Rename(rig, "b.bin", "a.bin");
        await rig.Engine.TickAsync();
        Assert.Equal(theirs, await rig.ObjectBytesAsync("moved/a.bin"));
        await rig.RestartAsync();
        for (var i = 0; i < 2; i++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
            await SettleAsync(rig);
        }

        Assert.Empty(rig.Engine.FindFiles("*conflict*"));
        Assert.Equal(changed, await rig.ObjectBytesAsync("a.bin"));
        Assert.Equal(theirs, await rig.ObjectBytesAsync("moved/a.bin"));
        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// The same soak failure's second half: a changed file renamed onto a name where another site really did write
    /// meanwhile keeps both (the conflict rule), and its old key still goes once its bytes are up under the
    /// conflict name. Before, the conflict copy forgot the old key, which stayed in the bucket for good.
    /// </summary>
    [Fact]
    public async Task A_changed_file_renamed_onto_a_name_another_site_wrote_keeps_both_and_leaves_no_old_key()
    {
        await using var rig = new DriveRig(s3);
        await rig.WriteAsync("b.bin", "b, first"u8.ToArray());
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("b.bin")).State);
        var changed = DriveRig.RandomBytes(40_000, 4);
        await rig.WriteAsync("b.bin", changed);
        Rename(rig, "b.bin", "c.bin");
        var theirs = "another site's new c.bin"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "c.bin", theirs);

        // Settled twice: the conflict copy waits out its own settle.
        for (var i = 0; i < 2; i++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
            await SettleAsync(rig);
        }

        var copy = Assert.Single(rig.Engine.FindFiles("c (conflict *).bin"));
        Assert.Equal(changed, await rig.ObjectBytesAsync(copy.Path));
        Assert.Equal(theirs, await rig.ObjectBytesAsync("c.bin"));
        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// A clean file renamed onto a name where another site wrote a file this drive has not seen: both changed, so
    /// both are kept. The renamed file's bytes go under a conflict name and the name shows the other site's file.
    /// Before, the rename's server-side copy replaced the other site's object without a word (a copy has no
    /// condition on what it replaces), and that file was gone.
    /// </summary>
    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task A_clean_file_renamed_onto_a_name_another_site_wrote_keeps_both(FileState state)
    {
        await using var rig = new DriveRig(s3, Policy);
        var mine = DriveRig.RandomBytes(30_000, 13);
        await WriteSettledAsync(rig, state, "a.bin", ("a.bin", mine));

        Rename(rig, "a.bin", "c.bin");
        var theirs = "another site's new c.bin"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "c.bin", theirs);
        for (var i = 0; i < 2; i++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
            await SettleAsync(rig);
        }

        Assert.Equal(theirs, await rig.ObjectBytesAsync("c.bin"));
        var copy = Assert.Single(rig.Engine.FindFiles("c (conflict *).bin"));
        Assert.Equal(mine, await rig.ObjectBytesAsync(copy.Path));
        Assert.Equal(mine, await rig.ReadAsync(copy.Path));
        Assert.Equal(theirs, await rig.ReadAsync("c.bin"));
        Assert.Null(await rig.Store.HeadAsync("a.bin"));
        Assert.Single(rig.Engine.ReadEvents(kind: DriveEventKind.Conflict));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// A file another site wrote (synced here) is deleted, and a new file is written under its name before the
    /// delete reached the bucket. The user replaced that file: the new one goes up over the version the deleted file
    /// knew, with no conflict copy. Before, the upload took that version for a change made elsewhere.
    /// </summary>
    [Fact]
    public async Task A_file_written_where_a_deleted_file_was_replaces_its_version_without_a_conflict()
    {
        await using var rig = new DriveRig(s3, Policy);
        var theirs = "b, as another site wrote it"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "b.bin", theirs);
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.Equal(theirs, await rig.ReadAsync("b.bin"));

        File.Delete(rig.Local("b.bin"));
        rig.Engine.Deleted("b.bin", rig.Caller, isDirectory: false);
        var written = DriveRig.RandomBytes(10_000, 14);
        await rig.WriteAsync("b.bin", written);
        await SettleAsync(rig);

        Assert.Empty(rig.Engine.FindFiles("*conflict*"));
        await AssertOnlyAsync(rig, "b.bin", written);
    }

    /// <summary>
    /// CI's randomized crash run, seed 1466328440: a file whose version another site wrote (synced here) is renamed away
    /// (or deleted), a new file is written under its name, the renamed one is deleted, and the service restarts before
    /// the new file goes up. The user replaced that file: the new one goes up over the version it knew, with no conflict
    /// copy. Before, that knowledge lived in memory only, and after the restart the upload took the version for a change
    /// made elsewhere: the bucket's old version showed under the name and the user's bytes became a conflict copy.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_file_written_where_a_file_was_renamed_away_or_deleted_replaces_its_version_after_a_restart_without_a_conflict(bool renamedAway)
    {
        await using var rig = new DriveRig(s3, Policy);
        var theirs = "b, as another site wrote it"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "b.bin", theirs);
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.Equal(theirs, await rig.ReadAsync("b.bin"));
        // Nothing goes up or is settled before the restart.
        rig.UsePolicy(Policy.Replace("settle: 0s", "settle: 1h"));

        var gone = renamedAway ? "z.bin" : "b.bin";
        if (renamedAway)
        {
            Rename(rig, "b.bin", "z.bin");
        }
        var written = DriveRig.RandomBytes(10_000, 19);
        if (!renamedAway)
        {
            Delete(rig, gone);
        }
        await rig.WriteAsync("b.bin", written);
        if (renamedAway)
        {
            Delete(rig, gone);
        }
        await rig.RestartAsync();
        rig.UsePolicy(Policy);
        await SettleAsync(rig);
        await rig.PassLateWriteGraceAsync();
        await SettleAsync(rig);

        Assert.Empty(rig.Engine.FindFiles("*conflict*"));
        Assert.Empty(rig.Engine.ReadEvents(kind: DriveEventKind.Conflict));
        await AssertOnlyAsync(rig, "b.bin", written, "z.bin");
    }

    /// <summary>
    /// A renamed file's copy sent by a run that was killed may still be stored after the restart, over whatever the new run
    /// wrote under the key since (ADR 0039). Were the file stubbed meanwhile, the late copy would stand for it: its newer bytes
    /// would be in neither the cache nor the bucket. So a file whose object a request of an earlier run may still write is
    /// not stubbed until the late-write grace has passed; then the late copy is found and the file goes up again, and it is
    /// stubbed. The late copy is written here by the test (a stand-in: a server storing a request late is a fault no real
    /// server makes on demand; CrashTests has it end to end).
    /// </summary>
    [Fact]
    public async Task A_file_whose_object_an_earlier_runs_copy_may_still_write_is_not_stubbed_before_the_late_write_grace_passed()
    {
        await using var rig = new DriveRig(s3, Policy);
        var (first, written, newer) = await NewerUploadWhereAnEarlierRunsCopyMayLandAsync(rig);

        var refused = await Record.ExceptionAsync(() => rig.Engine.StubAsync("y.bin"));
        await rig.Store.PutAsync("y.bin", new MemoryStream(first), first.Length, written.Metadata);
        await rig.PassLateWriteGraceAsync();
        await SettleAsync(rig);

        Assert.Equal(newer, await rig.ReadAsync("y.bin"));
        Assert.Equal(newer, await rig.ObjectBytesAsync("y.bin"));
        Assert.Equal(ErrorIds.LateWritePossible, Assert.IsType<GeoDriveException>(refused).ErrorId);
        Assert.Equal(FileState.Stubbed, (await rig.Engine.StubAsync("y.bin")).State);
        Assert.Equal(newer, await rig.ReadAsync("y.bin"));
    }

    /// <summary>As above, by the access-wait scan: it passes the file by quietly within the grace and stubs it when the grace ends.</summary>
    [Fact]
    public async Task The_access_wait_scan_stubs_a_file_whose_object_an_earlier_runs_copy_may_still_write_only_once_the_grace_passed()
    {
        await using var rig = new DriveRig(s3, Policy);
        var (_, _, newer) = await NewerUploadWhereAnEarlierRunsCopyMayLandAsync(rig);
        rig.UsePolicy(Policy.Replace("accessWait: 1h", "accessWait: 1s"));

        rig.Clock.Advance(TimeSpan.FromSeconds(2));
        await rig.Engine.TickAsync();
        Assert.Equal(FileState.Cached, rig.StateOf("y.bin"));
        Assert.DoesNotContain(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.Path == "y.bin");

        await rig.PassLateWriteGraceAsync();
        Assert.Equal(FileState.Stubbed, rig.StateOf("y.bin"));
        Assert.Equal(newer, await rig.ReadAsync("y.bin"));
    }

    /// <summary>
    /// x.bin uploaded and renamed to y.bin (its copy owed), the service restarted, the copy made by the new run, and newer
    /// bytes written to y.bin and uploaded, all within the late-write grace: the earlier run's copy may still land over them.
    /// Returns x.bin's bytes and object (what the late copy would write) and the newer bytes.
    /// </summary>
    private static async Task<(byte[] First, ObjectInfo Written, byte[] Newer)> NewerUploadWhereAnEarlierRunsCopyMayLandAsync(DriveRig rig)
    {
        var first = DriveRig.RandomBytes(30_000, 20);
        await rig.WriteAsync("x.bin", first);
        await SettleAsync(rig);
        var written = (await rig.Store.HeadAsync("x.bin"))!;
        Rename(rig, "x.bin", "y.bin");
        await rig.RestartAsync();
        await SettleAsync(rig);
        var newer = DriveRig.RandomBytes(20_000, 21);
        await rig.WriteAsync("y.bin", newer);
        await SettleAsync(rig);
        Assert.Equal(newer, await rig.ObjectBytesAsync("y.bin"));
        Assert.Equal(FileState.Cached, rig.StateOf("y.bin"));
        return (first, written, newer);
    }

    private static void Delete(DriveRig rig, string path)
    {
        File.Delete(rig.Local(path));
        rig.Engine.Deleted(path, rig.Caller, isDirectory: false);
    }

    /// <summary>
    /// Randomized crash test, seed 288874990: a file renamed (its copy still owed, so its bytes are still under its
    /// old key) is then replaced by another file renamed onto its name. The replaced file is gone, and so must its
    /// old key be; before, nothing owed that key a delete and it stayed in the bucket for good.
    /// </summary>
    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task A_renamed_file_replaced_by_another_rename_before_its_copy_leaves_no_old_key(FileState state)
    {
        await using var rig = new DriveRig(s3, Policy);
        var incoming = DriveRig.RandomBytes(20_000, 9);
        await WriteSettledAsync(rig, state, "a.bin", ("a.bin", DriveRig.RandomBytes(30_000, 8)), ("c.bin", incoming));

        Rename(rig, "a.bin", "b.bin");
        Rename(rig, "c.bin", "b.bin");
        await SettleAsync(rig);

        await AssertOnlyAsync(rig, "b.bin", incoming, "a.bin", "c.bin");
    }

    /// <summary>
    /// Soak seeds 1039595146, 202268412 and 1700429339: a clean file renamed over another (its copy still owed) and renamed
    /// on, alone or with its folder, before the copy was made. The replaced file's object under the name it passed goes;
    /// before, nothing owed it a delete (the copy that would have replaced it was never made) and it stayed for good.
    /// </summary>
    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task A_file_renamed_over_another_and_renamed_on_before_its_copy_leaves_no_object_under_the_name_it_passed(FileState state)
    {
        await using var rig = new DriveRig(s3, Policy);
        var incoming = DriveRig.RandomBytes(20_000, 15);
        await WriteSettledAsync(rig, state, "c.bin", ("b.bin", DriveRig.RandomBytes(10_000, 16)), ("c.bin", incoming));

        Rename(rig, "c.bin", "b.bin");
        Rename(rig, "b.bin", "d.bin");
        await SettleAsync(rig);

        await AssertOnlyAsync(rig, "d.bin", incoming, "b.bin", "c.bin");
    }

    /// <summary>
    /// Soak seed 1058385569: a clean file renamed (its copy owed), the service restarted, and a new file written under the
    /// old name and uploaded before the copy was made. The renamed file's bytes must survive: a stub's are brought home
    /// before the old key is overwritten, and an open never takes the new object under the old key for a newer version
    /// of the renamed file. Before, recovery forgot that a renamed Cached file still held its old key, the upload
    /// replaced the object, and the next open replaced the renamed file's bytes with the new file's.
    /// </summary>
    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task A_renamed_file_keeps_its_bytes_when_after_a_restart_a_new_file_under_its_old_name_goes_up_before_its_copy(FileState state)
    {
        await using var rig = new DriveRig(s3, Policy.Replace("settle: 0s", "settle: 0s, updateWait: 0s"));
        var moved = DriveRig.RandomBytes(30_000, 17);
        await WriteSettledAsync(rig, state, "x.bin", ("x.bin", moved));

        Rename(rig, "x.bin", "z.bin");
        await rig.RestartAsync();
        var newcomer = DriveRig.RandomBytes(20_000, 18);
        await rig.WriteAsync("x.bin", newcomer);
        await rig.Engine.UploadAsync("x.bin");

        Assert.Equal(moved, await rig.ReadAsync("z.bin"));
        await SettleAsync(rig);
        Assert.Equal(moved, await rig.ReadAsync("z.bin"));
        Assert.Equal(moved, await rig.ObjectBytesAsync("z.bin"));
        Assert.Equal(newcomer, await rig.ObjectBytesAsync("x.bin"));
        // The key the earlier run's copy was to write is looked at once the grace has passed (ADR 0039).
        await rig.PassLateWriteGraceAsync();
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// CI's randomized crash run, seed 1722552388: a file whose bucket version another site wrote (and this drive
    /// synced) is replaced by a file renamed onto its name, which is then changed. Its upload replaces the version
    /// the replaced file knew: the user replaced that file. Before, it took that version for a change made
    /// elsewhere, kept the new bytes as a conflict copy and showed the other site's version under the name. With a
    /// restart between the rename and the change (soak seed 1715731933), what the replaced file knew must outlive it.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_changed_file_renamed_over_a_file_whose_version_another_site_wrote_replaces_that_version_without_a_conflict(bool restartBetween)
    {
        await using var rig = new DriveRig(s3, Policy.Replace("settle: 0s", "settle: 0s, updateWait: 0s"));
        await rig.WriteAsync("b.bin", "b, first"u8.ToArray());
        await rig.WriteAsync("c.bin", "c"u8.ToArray());
        await SettleAsync(rig);
        var theirs = "b, as another site wrote it"u8.ToArray();
        await PutAsAnotherSiteAsync(rig, "b.bin", theirs);
        Assert.Equal(theirs, await rig.ReadAsync("b.bin"));

        Rename(rig, "c.bin", "b.bin");
        if (restartBetween)
        {
            await rig.RestartAsync();
        }
        var changed = DriveRig.RandomBytes(10_000, 10);
        await rig.WriteAsync("b.bin", changed);
        await SettleAsync(rig);

        Assert.Empty(rig.Engine.FindFiles("*conflict*"));
        if (restartBetween)
        {
            await rig.PassLateWriteGraceAsync();
        }
        await AssertOnlyAsync(rig, "b.bin", changed, "c.bin");
    }

    /// <summary>
    /// Randomized crash test, seed 1722552388 round 10: a clean file renamed over another (its copy still owed) and
    /// deleted before the copy. The replaced file's object under the name goes with it; before, it stayed for good.
    /// </summary>
    [Fact]
    public async Task A_file_renamed_over_another_and_deleted_before_its_copy_leaves_neither_object()
    {
        await using var rig = new DriveRig(s3, Policy);
        await rig.WriteAsync("b.bin", DriveRig.RandomBytes(10_000, 11));
        await rig.WriteAsync("c.bin", DriveRig.RandomBytes(10_000, 12));
        await SettleAsync(rig);

        Rename(rig, "c.bin", "b.bin");
        File.Delete(rig.Local("b.bin"));
        rig.Engine.Deleted("b.bin", rig.Caller, isDirectory: false);
        await SettleAsync(rig);

        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Null(await rig.Store.HeadAsync("c.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Theory]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Cached)]
    public async Task Two_files_swapped_by_three_renames_keep_their_bytes_in_the_mount_and_the_bucket(FileState state)
    {
        await using var rig = new DriveRig(s3, Policy);
        var a = DriveRig.RandomBytes(30_000, 5);
        var b = DriveRig.RandomBytes(20_000, 6);
        await rig.WriteAsync("a.bin", a);
        await rig.WriteAsync("b.bin", b);
        await SettleAsync(rig);
        if (state == FileState.Stubbed)
        {
            await rig.Engine.StubAsync("a.bin");
            await rig.Engine.StubAsync("b.bin");
        }

        Rename(rig, "a.bin", "swap.bin");
        Rename(rig, "b.bin", "a.bin");
        Rename(rig, "swap.bin", "b.bin");
        await SettleAsync(rig);

        Assert.Equal(b, await rig.ObjectBytesAsync("a.bin"));
        Assert.Equal(a, await rig.ObjectBytesAsync("b.bin"));
        Assert.Null(await rig.Store.HeadAsync("swap.bin"));
        Assert.Equal(b, await rig.ReadAsync("a.bin"));
        Assert.Equal(a, await rig.ReadAsync("b.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// CI's randomized crash run, seed 382177918: a stub renamed (its bytes still under its old name's key, its copy owed),
    /// a new file written under the old name, and the stub renamed on while that file's upload waited for the stub's lock
    /// to bring its bytes home first. The upload must follow the stub to its new name. Before, it found the old name empty,
    /// let go of the key and replaced the object: the copy then failed, and the stub's bytes were gone. The moment is forced
    /// by an index that starts the upload from inside the second rename (its path locks held).
    /// </summary>
    [Fact]
    public async Task A_stub_renamed_on_while_an_upload_to_the_key_it_holds_waits_for_it_keeps_its_bytes_hooked_index()
    {
        await using var rig = new DriveRig(s3, Policy.Replace("settle: 0s", "settle: 0s, updateWait: 0s"), hookedIndex: true);
        var moved = DriveRig.RandomBytes(30_000, 21);
        await WriteSettledAsync(rig, FileState.Stubbed, "a.bin", ("a.bin", moved));
        Rename(rig, "a.bin", "b.bin");
        var newcomer = DriveRig.RandomBytes(20_000, 22);
        await rig.WriteAsync("a.bin", newcomer);

        Task<FileEntry>? upload = null;
        // Runs until it waits for b.bin's lock, which the rename holds: the upload has seen b.bin hold the key.
        rig.Hooks!.BeforeRename = (from, _) => upload ??= from == "b.bin" ? rig.Engine.UploadAsync("a.bin") : null;
        Rename(rig, "b.bin", "c.bin");
        rig.Hooks.BeforeRename = null;
        Assert.NotNull(upload);
        await upload;
        await SettleAsync(rig);

        Assert.Equal(moved, await rig.ReadAsync("c.bin"));
        Assert.Equal(moved, await rig.ObjectBytesAsync("c.bin"));
        Assert.Equal(newcomer, await rig.ObjectBytesAsync("a.bin"));
        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// Found by the randomized crash test (a swap's last rename answered "file exists"): a renamed file's copy lands
    /// in the bucket, and before the engine records it the file is renamed on. The new key's object is this drive's
    /// own copy in flight, not a file to sync down: a lookup of the name it left must not bring it back as a stub.
    /// The moment is forced by a store that holds the copy's answer (fault injection: a real race needs luck).
    /// </summary>
    [Fact]
    public async Task A_name_renamed_away_while_its_copy_was_landing_is_not_brought_back_by_a_lookup_copy_held_by_a_hooked_store()
    {
        HeldCopies held = null!;
        await using var rig = new DriveRig(s3, Policy.Replace("settle: 0s", "settle: 0s, updateWait: 0s"), storeInFront: s => held = new HeldCopies(s));
        var bytes = DriveRig.RandomBytes(20_000, 7);
        await rig.WriteAsync("a.bin", bytes);
        await SettleAsync(rig);
        Rename(rig, "a.bin", "b.bin");

        var tick = rig.Engine.TickAsync();
        await held.Landed.Task;
        Rename(rig, "b.bin", "c.bin");
        var resurrected = await rig.Engine.LookupMissingAsync("b.bin", rig.Caller);
        held.Release.SetResult();
        await tick;
        await SettleAsync(rig);

        Assert.False(resurrected);
        Assert.Null(rig.Engine.GetFile("b.bin"));
        Assert.False(File.Exists(rig.Local("b.bin")));
        Assert.Equal(bytes, await rig.ReadAsync("c.bin"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("c.bin"));
        Assert.Null(await rig.Store.HeadAsync("b.bin"));
        Assert.Null(await rig.Store.HeadAsync("a.bin"));
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    /// <summary>Makes the first copy in the bucket, then holds its answer until the test releases it.</summary>
    private sealed class HeldCopies(Core.Ports.IObjectStore inner) : ForwardingStore(inner)
    {
        public TaskCompletionSource Landed { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public TaskCompletionSource Release { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override async Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected,
            IReadOnlyDictionary<string, string>? metadata, Core.Ports.IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default)
        {
            var copied = await Inner.CopyAsync(sourceKey, destinationKey, expected, metadata, observer, replacing, cancellationToken);
            if (Landed.TrySetResult())
            {
                await Release.Task;
            }
            return copied;
        }
    }

    [Fact]
    public async Task A_folder_rename_interrupted_by_a_restart_finishes_its_copies_and_loses_no_file()
    {
        const int files = 600;
        await using var rig = new DriveRig(s3, Policy);
        var contents = Enumerable.Range(0, files).ToDictionary(i => $"f{i:D4}.bin", i => DriveRig.RandomBytes(1000 + i, i));
        foreach (var (name, bytes) in contents)
        {
            await rig.WriteAsync("old/" + name, bytes);
        }
        await SettleAsync(rig);
        for (var i = 0; i < files; i += 2)
        {
            await rig.Engine.StubAsync($"old/f{i:D4}.bin");
        }

        Rename(rig, "old", "new");
        // One tick settles a batch (512) of the 600 copies; the restart comes in the middle.
        await rig.Engine.TickAsync();
        await rig.RestartAsync();
        await SettleAsync(rig);

        foreach (var (name, bytes) in contents)
        {
            Assert.Equal(bytes, await rig.ObjectBytesAsync("new/" + name));
            Assert.Null(await rig.Store.HeadAsync("old/" + name));
            Assert.Equal(bytes, await rig.ReadAsync("new/" + name));
        }
        // The old keys' deletes the killed run owed stay owed through the late-write grace, then are done.
        await rig.PassLateWriteGraceAsync();
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }
}
