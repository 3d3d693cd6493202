using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Paying what the journal owes, on its own: a real bucket, index and journal, no engine. Deletes wait while a
/// renamed file still needs the key and are dropped once a file lives under it again; a copy is pinned to the
/// version the file records. The engine's renames and deletes that owe them are ServerSideRenameTests' and
/// BucketJournalTests'.
/// </summary>
public sealed class OwedChangeSettlerTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;
    private OwedBucketChanges _owed = null!;
    private RenamedKeys _renamed = null!;
    private readonly List<(string Path, string From, string ErrorId)> _copiesFailed = [];
    private readonly List<(string Path, string From)> _ontoTakenNames = [];

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        _owed = new OwedBucketChanges(_rig.Index, _rig.Clock, TimeSpan.FromMinutes(5));
        _renamed = new RenamedKeys(_rig.Index.Get, path => path);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    // What the settler told the drive's peers it did.
    private readonly List<BucketChangeMade> _changesMade = [];

    private OwedChangeSettler Settler(Core.Ports.IObjectStore? store = null) => new(
        new DriveEngineOptions { Name = "settler", CachePath = _rig.CachePath }, store ?? _rig.Store, _rig.Index, new FileLife(_rig.Index),
        new PathLocks(), new PathLocks(), new KeyCounts(), _renamed, _owed, () => _rig.Policy, () => "site-of-the-test",
        (path, from, error, _) =>
        {
            _copiesFailed.Add((path, from, error.ErrorId));
            return Task.CompletedTask;
        },
        (path, from, _) =>
        {
            _ontoTakenNames.Add((path, from));
            return Task.CompletedTask;
        },
        (_, _, _) => Task.CompletedTask,
        _owed.EndpointAnswered,
        (entry, _) =>
        {
            _lateWritesOver.Add(entry.Path);
            return true;
        },
        (_, _, _, _) => { },
        _changesMade.Add);

    // Clean files the settler found under an older write of this site's (each goes up again; BucketSyncTests has the rule).
    private readonly List<string> _lateWritesOver = [];

    /// <summary>An object as this drive's upload writes it (<paramref name="site"/>: another site's).</summary>
    private async Task<ObjectInfo> PutAsync(string key, byte[] bytes, string site = ThisSite)
    {
        var metadata = ObjectLayout.MetadataFor(Convert.ToHexStringLower(SHA256.HashData(bytes)), null, bytes.Length, DateTimeOffset.UnixEpoch, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        metadata[ObjectLayout.SiteKey] = site;
        return await _rig.Store.PutAsync(key, new MemoryStream(bytes), bytes.Length, metadata);
    }

    /// <summary>A Cached file uploaded under <paramref name="from"/> and renamed to <paramref name="to"/>: its entry, and its copy owed.</summary>
    private async Task<byte[]> CachedFileRenamedAsync(string from, string to, int seed)
    {
        var bytes = DriveRig.RandomBytes(3000, seed);
        Entry(to, FileState.Cached, await PutAsync(from, bytes), bytes);
        _owed.OweCopies([(from, to)]);
        return bytes;
    }

    private FileEntry Entry(string path, FileState state, ObjectInfo put, byte[] bytes)
    {
        var entry = new FileEntry
        {
            Path = path, State = state, Size = bytes.Length, ObjectKey = put.Key, ETag = put.ETag,
            Checksum = Convert.ToHexStringLower(SHA256.HashData(bytes)), ModifiedUtc = DateTimeOffset.UnixEpoch,
        };
        _rig.Index.Put(entry);
        return entry;
    }

    [Fact]
    public async Task A_delete_waits_while_a_renamed_stub_still_stands_for_the_key_and_is_made_once_it_no_longer_does()
    {
        var bytes = DriveRig.RandomBytes(1000, 1);
        var put = await PutAsync("old.bin", bytes);
        var stub = Entry("new.bin", FileState.Stubbed, put, bytes);
        _renamed.Track(stub);
        _owed.OweDeletes(["old.bin"]);
        var settler = Settler();

        Assert.Equal(0, await settler.SettleAsync(CancellationToken.None));
        Assert.NotNull(await _rig.Store.HeadAsync("old.bin"));
        Assert.Equal(1, _owed.Count);

        // Recalled and uploaded under its own name: the old key holds nothing anyone needs.
        stub.ObjectKey = "new.bin";
        _rig.Index.Put(stub);
        _rig.Clock.Advance(TimeSpan.FromMinutes(10));

        Assert.Equal(1, await settler.SettleAsync(CancellationToken.None));
        Assert.Null(await _rig.Store.HeadAsync("old.bin"));
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_delete_of_a_key_a_file_lives_under_again_is_dropped_and_its_object_kept()
    {
        var bytes = DriveRig.RandomBytes(500, 2);
        var put = await PutAsync("again.bin", bytes);
        _owed.OweDeletes(["again.bin"]);
        Entry("again.bin", FileState.Cached, put, bytes);

        Assert.Equal(0, await Settler().SettleAsync(CancellationToken.None));

        Assert.NotNull(await _rig.Store.HeadAsync("again.bin"));
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_renamed_clean_files_copy_is_made_recorded_and_its_old_key_deleted_in_one_settling()
    {
        var bytes = DriveRig.RandomBytes(3000, 3);
        var put = await PutAsync("docs/a.bin", bytes);
        var entry = Entry("docs/b.bin", FileState.Cached, put, bytes);
        Directory.CreateDirectory(_rig.Local("docs"));
        await File.WriteAllBytesAsync(_rig.Local("docs/b.bin"), bytes);
        _renamed.Track(entry);
        _owed.OweCopies([("docs/a.bin", "docs/b.bin")]);

        Assert.Equal(1, await Settler().SettleAsync(CancellationToken.None));

        var recorded = _rig.Index.Get("docs/b.bin")!;
        Assert.Equal("docs/b.bin", recorded.ObjectKey);
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("docs/b.bin"));
        Assert.Null(await _rig.Store.HeadAsync("docs/a.bin"));
        Assert.False(_renamed.IsHeld("docs/a.bin"));
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_copy_whose_source_another_writer_replaced_is_not_made_and_the_file_is_handed_back()
    {
        var bytes = await CachedFileRenamedAsync("x.bin", "y.bin", 4);
        await PutAsync("x.bin", DriveRig.RandomBytes(3000, 5));

        await Settler().SettleAsync(CancellationToken.None);

        Assert.Null(await _rig.Store.HeadAsync("y.bin"));
        Assert.Equal([("y.bin", "x.bin", ErrorIds.ObjectMismatch)], _copiesFailed);
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_copy_onto_a_key_holding_another_sites_object_is_not_made_and_the_file_is_handed_back()
    {
        var bytes = await CachedFileRenamedAsync("x.bin", "y.bin", 7);
        var theirs = DriveRig.RandomBytes(1000, 8);
        await PutAsync("y.bin", theirs, site: "another-site");

        await Settler().SettleAsync(CancellationToken.None);

        Assert.Equal(theirs, await _rig.ObjectBytesAsync("y.bin"));
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("x.bin"));
        Assert.Equal([("y.bin", "x.bin")], _ontoTakenNames);
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_copy_onto_a_key_holding_the_version_a_rename_away_left_is_made()
    {
        var bytes = await CachedFileRenamedAsync("x.bin", "y.bin", 9);
        var left = await PutAsync("y.bin", DriveRig.RandomBytes(1000, 10));
        _renamed.Left("y.bin", left.ETag);

        await Settler().SettleAsync(CancellationToken.None);

        Assert.Equal(bytes, await _rig.ObjectBytesAsync("y.bin"));
        Assert.Empty(_ontoTakenNames);
        Assert.Equal(0, _owed.Count);
    }

    /// <summary>Soak seed 1567145310 (3 lanes, lane 2, round 13): a stub renamed with its folder was read during an outage.</summary>
    [Fact]
    public async Task A_copy_owed_while_the_renamed_stub_is_being_recalled_waits_for_the_recall_and_is_made_when_it_failed()
    {
        var bytes = DriveRig.RandomBytes(2000, 6);
        var put = await PutAsync("old/f.bin", bytes);
        var stub = Entry("new/f.bin", FileState.Recalling, put, bytes);
        _renamed.Track(stub);
        _owed.OweCopies([("old/f.bin", "new/f.bin")]);
        var settler = Settler();

        await settler.SettleAsync(CancellationToken.None);

        // The recall reads the old key: the copy is neither made nor forgotten while it runs.
        Assert.Equal(1, _owed.Count);
        Assert.Null(await _rig.Store.HeadAsync("new/f.bin"));

        // The recall failed (the endpoint was down): a stub of the old key again, which still needs its copy.
        stub.State = FileState.Stubbed;
        _rig.Index.Put(stub);
        await settler.SettleAsync(CancellationToken.None);

        Assert.Equal("new/f.bin", _rig.Index.Get("new/f.bin")!.ObjectKey);
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("new/f.bin"));
        Assert.Null(await _rig.Store.HeadAsync("old/f.bin"));
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public async Task A_stub_whose_recall_starts_during_its_copy_keeps_its_old_key_and_object_until_the_recall_ended()
    {
        var bytes = DriveRig.RandomBytes(2000, 7);
        var put = await PutAsync("was.bin", bytes);
        var stub = Entry("is.bin", FileState.Stubbed, put, bytes);
        _renamed.Track(stub);
        _owed.OweCopies([("was.bin", "is.bin")]);
        var store = new RecallDuringCopy(_rig.Store, () => _rig.Index.Put(new FileEntry
        {
            Path = stub.Path, State = FileState.Recalling, Size = stub.Size, ObjectKey = stub.ObjectKey, ETag = stub.ETag,
            Checksum = stub.Checksum, ModifiedUtc = stub.ModifiedUtc, Generation = stub.Generation,
        }));

        await Settler(store).SettleAsync(CancellationToken.None);

        // The recall reads was.bin: it is still the entry's key, and still in the bucket.
        Assert.Equal("was.bin", _rig.Index.Get("is.bin")!.ObjectKey);
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("was.bin"));
        Assert.Equal(1, _owed.Count);

        var failed = _rig.Index.Get("is.bin")!;
        failed.State = FileState.Stubbed;
        _rig.Index.Put(failed);
        await Settler().SettleAsync(CancellationToken.None);

        Assert.Equal("is.bin", _rig.Index.Get("is.bin")!.ObjectKey);
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("is.bin"));
        Assert.Null(await _rig.Store.HeadAsync("was.bin"));
        Assert.Equal(0, _owed.Count);
    }

    /// <summary>Soak seed 1349217573 (lane 1, round 1): the old key of a renamed file stayed in the bucket for good.</summary>
    [Fact]
    public async Task A_copy_recorded_just_before_a_crash_loses_no_old_key_when_its_file_is_deleted_before_the_journal_is_replayed()
    {
        var bytes = DriveRig.RandomBytes(1500, 8);
        await PutAsync("before.bin", bytes);
        // Copied and recorded (the entry named after.bin), then the service was killed before the old key's delete was journaled.
        await PutAsync("after.bin", bytes);
        _owed.OweCopies([("before.bin", "after.bin")]);
        var restarted = new OwedBucketChanges(_rig.Index, _rig.Clock, TimeSpan.FromMinutes(5));
        // Deleted after the restart: its entry named after.bin only, so only that key was owed.
        restarted.OweDeletes(["after.bin"]);
        _owed = restarted;

        await Settler().SettleAsync(CancellationToken.None);

        Assert.Null(await _rig.Store.HeadAsync("after.bin"));
        Assert.Null(await _rig.Store.HeadAsync("before.bin"));
        Assert.Equal(0, _owed.Count);
    }

    private const string ThisSite = "site-of-the-test";

    private async Task PutFromAsync(string site, string key, byte[] bytes)
    {
        var metadata = ObjectLayout.MetadataFor(Convert.ToHexStringLower(SHA256.HashData(bytes)), null, bytes.Length, DateTimeOffset.UnixEpoch, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        metadata[ObjectLayout.SiteKey] = site;
        await _rig.Store.PutAsync(key, new MemoryStream(bytes), bytes.Length, metadata);
    }

    /// <summary>The journal as a restarted run reads it, with a late-write grace of 2 minutes from now.</summary>
    private void Restart() => _owed = new OwedBucketChanges(_rig.Index, _rig.Clock, TimeSpan.FromMinutes(5), lateWriteGrace: TimeSpan.FromMinutes(2));

    private int DeletesMade(string key) => _changesMade.Count(c => c.Kind == BucketChangeMadeKind.Delete && c.Key == key);

    /// <summary>
    /// Randomized crash run, seed 1310022743: the killed run's PUT of a file deleted meanwhile was stored after the restarted
    /// run's delete, and the deleted file came back. The delete is made at once, stays owed (a tombstone) through the grace,
    /// and then the key is asked again: this site's late object goes too.
    /// </summary>
    [Fact]
    public async Task A_delete_an_earlier_run_owed_is_made_at_once_and_again_for_this_sites_write_that_landed_within_the_grace()
    {
        var bytes = DriveRig.RandomBytes(2000, 21);
        _owed.OweDeletes(["gone.bin"]);
        Restart();
        await PutFromAsync(ThisSite, "gone.bin", bytes);

        await Settler().SettleAsync(CancellationToken.None);
        Assert.Null(await _rig.Store.HeadAsync("gone.bin"));
        Assert.True(_owed.IsDeleteOwed("gone.bin"), "no tombstone while the killed run's requests may still land");

        // The killed run's PUT, stored late; nothing is asked again before the grace has passed.
        await PutFromAsync(ThisSite, "gone.bin", bytes);
        _rig.Clock.Advance(TimeSpan.FromMinutes(2) - TimeSpan.FromSeconds(1));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.NotNull(await _rig.Store.HeadAsync("gone.bin"));

        _rig.Clock.Advance(TimeSpan.FromSeconds(1));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Null(await _rig.Store.HeadAsync("gone.bin"));
        Assert.Equal(0, _owed.Count);
        Assert.Equal(2, DeletesMade("gone.bin"));
    }

    [Fact]
    public async Task Another_sites_object_under_a_key_an_earlier_run_deleted_stays_when_the_key_is_asked_again()
    {
        var theirs = DriveRig.RandomBytes(2000, 22);
        _owed.OweDeletes(["shared.bin"]);
        Restart();
        await Settler().SettleAsync(CancellationToken.None);

        // Another site writes a new file under the name after the delete.
        await PutFromAsync("other-site", "shared.bin", theirs);
        _rig.Clock.Advance(TimeSpan.FromMinutes(2));
        await Settler().SettleAsync(CancellationToken.None);

        Assert.Equal(theirs, await _rig.ObjectBytesAsync("shared.bin"));
        Assert.Equal(0, _owed.Count);
        Assert.Equal(1, DeletesMade("shared.bin"));
    }

    [Fact]
    public async Task A_delete_this_run_owes_and_one_made_after_the_grace_are_done_when_made()
    {
        _owed.OweDeletes(["inherited.bin"]);
        Restart();
        _owed.OweDeletes(["this-run.bin"]);
        await Settler().SettleAsync(CancellationToken.None);
        Assert.False(_owed.IsDeleteOwed("this-run.bin"), "a delete this run journaled waits for no earlier run's requests");

        _owed.OweDeletes(["late.bin"]);
        Restart();
        _rig.Clock.Advance(TimeSpan.FromMinutes(3));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Equal(0, _owed.Count);
    }

    /// <summary>
    /// A file found Dirty at start (its first upload possibly out when the run died) and deleted right after the restart: this
    /// run's delete, made at once, is looked at again after the grace as an earlier run's is. A delete after the grace, or of
    /// a key no earlier request may write, is done when made.
    /// </summary>
    [Fact]
    public async Task A_delete_owed_within_the_grace_for_a_key_an_earlier_runs_upload_may_write_is_looked_at_again()
    {
        var bytes = DriveRig.RandomBytes(2000, 25);
        Restart();
        _owed.MayBeWrittenLate("fresh.bin");
        _owed.OweDeletes(["fresh.bin", "other.bin"]);
        await Settler().SettleAsync(CancellationToken.None);
        Assert.True(_owed.IsDeleteOwed("fresh.bin"), "no tombstone while the earlier run's upload may still land");
        Assert.False(_owed.IsDeleteOwed("other.bin"), "a key no earlier request writes waits for nothing");

        await PutFromAsync(ThisSite, "fresh.bin", bytes);
        _rig.Clock.Advance(TimeSpan.FromMinutes(2));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Null(await _rig.Store.HeadAsync("fresh.bin"));
        Assert.Equal(0, _owed.Count);

        _owed.OweDeletes(["fresh.bin"]);
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Equal(0, _owed.Count);
    }

    /// <summary>
    /// ADR 0039: a copy the killed run sent names nothing it may replace, so it may land after the restarted run copied again
    /// and the file's newer bytes went up. Once the grace has passed, the key is asked, once, without waiting for an open.
    /// </summary>
    [Fact]
    public async Task The_key_an_earlier_runs_copy_was_to_write_is_looked_at_once_when_the_grace_has_passed_and_a_clean_file_there_meets_the_late_copy()
    {
        var first = await CachedFileRenamedAsync("before.bin", "after.bin", 23);
        Restart();
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Equal("after.bin", _rig.Index.Get("after.bin")!.ObjectKey);

        // The file's newer bytes went up; then the dead run's copy lands: the first bytes, this site's, with their older time.
        await NewerUploadThenLateWriteAsync("after.bin", first, 24);

        await AssertLookedAtOnceWhenTheGracePassedAsync("after.bin");
    }

    /// <summary>A Cached file's newer bytes (this site's, a day after the epoch) in the bucket and its entry; then <paramref name="older"/> lands over them, as this site wrote it.</summary>
    private async Task NewerUploadThenLateWriteAsync(string path, byte[] older, int seed)
    {
        var newer = DriveRig.RandomBytes(3000, seed);
        var newerTime = DateTimeOffset.UnixEpoch.AddDays(1);
        var metadata = ObjectLayout.MetadataFor(Convert.ToHexStringLower(SHA256.HashData(newer)), null, newer.Length, newerTime, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        metadata[ObjectLayout.SiteKey] = ThisSite;
        var entry = Entry(path, FileState.Cached, await _rig.Store.PutAsync(path, new MemoryStream(newer), newer.Length, metadata), newer);
        entry.ModifiedUtc = newerTime;
        _rig.Index.Put(entry);
        await PutFromAsync(ThisSite, path, older);
    }

    /// <summary>Nothing is looked at, nor counted as owed, until the 2-minute grace has passed; then <paramref name="path"/> is, once.</summary>
    private async Task AssertLookedAtOnceWhenTheGracePassedAsync(string path)
    {
        _rig.Clock.Advance(TimeSpan.FromMinutes(2) - TimeSpan.FromSeconds(1));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Empty(_lateWritesOver);
        _rig.Clock.Advance(TimeSpan.FromSeconds(1));
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Equal([path], _lateWritesOver);
        await Settler().SettleAsync(CancellationToken.None);
        Assert.Equal([path], _lateWritesOver);
    }

    /// <summary>
    /// As above for a file recovery found Dirty or Uploading: the killed run's PUT of it may land after the file's newer
    /// bytes went up, over them where the server takes no conditions (ADR 0029). Once the grace has passed its key is asked
    /// once too, so the bucket does not keep the old bytes until someone opens the file; it is not counted as owed meanwhile.
    /// </summary>
    [Fact]
    public async Task The_key_of_a_file_an_earlier_run_was_uploading_is_looked_at_once_when_the_grace_has_passed_and_a_clean_file_there_meets_the_late_PUT()
    {
        var first = DriveRig.RandomBytes(2000, 25);
        Restart();
        _owed.MayBeWrittenLate("draft.bin");
        await NewerUploadThenLateWriteAsync("draft.bin", first, 26);

        Assert.Equal(0, _owed.Count);
        await AssertLookedAtOnceWhenTheGracePassedAsync("draft.bin");
    }

    /// <summary>The real store; a test's moment: the file's recall starts while its copy is in flight (no real part picks that moment).</summary>
    private sealed class RecallDuringCopy(Core.Ports.IObjectStore inner, Action recallStarts) : ForwardingStore(inner)
    {
        public override async Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata,
            Core.Ports.IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default)
        {
            var copied = await base.CopyAsync(sourceKey, destinationKey, expected, metadata, observer, replacing, cancellationToken);
            recallStarts();
            return copied;
        }
    }
}