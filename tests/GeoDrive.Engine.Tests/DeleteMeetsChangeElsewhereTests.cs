using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Two sites on one bucket (two engines, each with its own cache, index and site id): a file deleted or renamed away at one
/// site while the other changed it. The change made elsewhere is never deleted: before, the delete removed it from the bucket,
/// the other site followed the delete and removed its own copy, and the change was gone everywhere.
/// </summary>
public sealed class DeleteMeetsChangeElsewhereTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string Policy = TwoSites.Policy;

    private static Task SettleAsync(DriveRig rig) => TwoSites.SettleAsync(rig);

    /// <summary>
    /// Site A wrote f.bin (and stubbed it, when <paramref name="stubbed"/>), site B read it and then changed it; A has not
    /// heard of the change. Returns both versions.
    /// </summary>
    private static async Task<(byte[] First, byte[] Changed)> ChangedElsewhereAsync(DriveRig a, DriveRig b, bool stubbed = false)
    {
        var first = DriveRig.RandomBytes(5_000, 1);
        await a.WriteAsync("f.bin", first);
        await SettleAsync(a);
        if (stubbed)
        {
            await a.Engine.StubAsync("f.bin");
        }
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        Assert.Equal(first, await b.ReadAsync("f.bin"));
        var changed = DriveRig.RandomBytes(6_000, 2);
        await b.WriteAsync("f.bin", changed);
        await SettleAsync(b);
        Assert.Equal(changed, await b.ObjectBytesAsync("f.bin"));
        return (first, changed);
    }

    /// <summary>The user at <paramref name="site"/> renames f.bin to g.bin, or deletes it.</summary>
    private static void RenameAwayOrDelete(DriveRig site, bool renamedAway)
    {
        if (renamedAway)
        {
            File.Move(site.Local("f.bin"), site.Local("g.bin"));
            site.Engine.Renamed("f.bin", "g.bin", site.Caller, isDirectory: false);
        }
        else
        {
            File.Delete(site.Local("f.bin"));
            site.Engine.Deleted("f.bin", site.Caller, isDirectory: false);
        }
    }

    /// <summary>B looks at the bucket again (a listing, then an open) and reads its file.</summary>
    private static async Task<byte[]> ReadAtBAsync(DriveRig b)
    {
        b.Clock.Advance(TimeSpan.FromMinutes(5));
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        return await b.ReadAsync("f.bin");
    }

    [Fact]
    public async Task A_file_renamed_away_here_while_another_site_changed_it_keeps_the_change_under_the_old_name()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (first, changed) = await ChangedElsewhereAsync(a, b);

        RenameAwayOrDelete(a, renamedAway: true);
        await SettleAsync(a);

        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(first, await a.ObjectBytesAsync("g.bin"));
        Assert.Equal(changed, await ReadAtBAsync(b));
        Assert.Contains(a.Engine.ReadEvents(kind: DriveEventKind.Conflict), e => e.Path == "f.bin" && e.Message.Contains("Not deleted", StringComparison.Ordinal));
        await a.Engine.BeforeEnumerateAsync("", a.Caller);
        Assert.Equal(changed, await a.ReadAsync("f.bin"));
        Assert.Equal(first, await a.ReadAsync("g.bin"));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_file_deleted_here_while_another_site_changed_it_keeps_the_change()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (_, changed) = await ChangedElsewhereAsync(a, b);

        RenameAwayOrDelete(a, renamedAway: false);
        await SettleAsync(a);

        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(changed, await ReadAtBAsync(b));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_file_deleted_or_renamed_away_here_while_another_site_changed_it_keeps_the_change_across_a_restart(bool renamedAway)
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (_, changed) = await ChangedElsewhereAsync(a, b);

        RenameAwayOrDelete(a, renamedAway);
        if (renamedAway)
        {
            // The copy is refused (its source replaced), the file goes up under its new name, the old key's delete is owed.
            await a.Engine.TickAsync();
            await a.Engine.WhenUploadsIdleAsync();
        }
        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        await a.RestartAsync();
        await SettleAsync(a);
        await a.PassLateWriteGraceAsync();
        await SettleAsync(a);

        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(changed, await ReadAtBAsync(b));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_stub_renamed_here_while_another_site_changed_it_takes_the_change_to_its_new_name_and_leaves_it_under_the_old_one()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (_, changed) = await ChangedElsewhereAsync(a, b, stubbed: true);

        RenameAwayOrDelete(a, renamedAway: true);
        await SettleAsync(a);

        Assert.Equal(changed, await a.ReadAsync("g.bin"));
        Assert.Equal(changed, await a.ObjectBytesAsync("g.bin"));
        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
        Assert.Equal(changed, await ReadAtBAsync(b));
        Assert.Equal(changed, await b.ReadAsync("g.bin"));
    }

    /// <summary>
    /// The same, opened before the next tick: the open's recall, pinned to the stub's version at its old key, was refused, and
    /// the open failed (ObjectMismatch) until the tick's copy settled it. The open follows the old key itself now.
    /// </summary>
    [Fact]
    public async Task A_stub_renamed_here_while_another_site_changed_it_opens_with_the_change_before_the_next_tick()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (_, changed) = await ChangedElsewhereAsync(a, b, stubbed: true);

        RenameAwayOrDelete(a, renamedAway: true);

        Assert.Equal(changed, await a.ReadAsync("g.bin"));
        await SettleAsync(a);
        Assert.Equal(changed, await a.ObjectBytesAsync("g.bin"));
        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// Opened before the next tick, the renamed stub is not found: the open follows the old key's delete itself (before, it
    /// failed with ObjectMismatch until the tick's copy settled it).
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_stub_renamed_here_while_another_site_deleted_it_follows_the_delete(bool openedBeforeTheNextTick)
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        await a.WriteAsync("f.bin", DriveRig.RandomBytes(5_000, 6));
        await SettleAsync(a);
        await a.Engine.StubAsync("f.bin");
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        RenameAwayOrDelete(b, renamedAway: false);
        await SettleAsync(b);

        RenameAwayOrDelete(a, renamedAway: true);
        if (openedBeforeTheNextTick)
        {
            var refused = await Assert.ThrowsAsync<GeoDriveException>(() => a.ReadAsync("g.bin"));
            Assert.Equal(ErrorIds.FileNotFound, refused.ErrorId);
        }
        await SettleAsync(a);

        Assert.Null(a.Engine.GetFile("g.bin"));
        Assert.False(File.Exists(a.Local("g.bin")));
        Assert.Null(await a.Store.HeadAsync("g.bin"));
        Assert.Empty(a.Engine.ReadEvents(kind: DriveEventKind.Error));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// A stub renamed here onto a name another site has just written a file under, while that site deleted the stub's own
    /// object: its bytes were to come home from the old key before both were kept, and that recall failed at every tick for
    /// good, holding the copy owed (two-site random test, seed 282930557).
    /// </summary>
    [Fact]
    public async Task A_stub_renamed_here_onto_another_sites_new_file_while_that_site_deleted_it_follows_the_delete()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        await b.WriteAsync("f.bin", DriveRig.RandomBytes(5_000, 9));
        await SettleAsync(b);
        await b.Engine.StubAsync("f.bin");
        await a.Engine.BeforeEnumerateAsync("", a.Caller);
        RenameAwayOrDelete(a, renamedAway: false);
        var theirs = DriveRig.RandomBytes(6_000, 10);
        await a.WriteAsync("g.bin", theirs);
        await SettleAsync(a);

        RenameAwayOrDelete(b, renamedAway: true);
        await SettleAsync(b);

        Assert.Equal(0, b.Engine.OwedBucketChangeCount);
        Assert.Equal(theirs, await b.ObjectBytesAsync("g.bin"));
        b.Clock.Advance(TimeSpan.FromMinutes(5));
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        Assert.Equal(theirs, await b.ReadAsync("g.bin"));
        Assert.Null(b.Engine.GetFile("f.bin"));
    }

    /// <summary>
    /// A file new here, not uploaded yet, renamed away or deleted while another site wrote its own new file under the same
    /// name: this drive owes a delete of the name's key (an upload of its own may have been on its way), which removed the
    /// other site's file, and that site followed the delete (two-site random test, seed 821331865).
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_new_file_here_deleted_or_renamed_away_before_its_upload_never_deletes_another_sites_file_of_that_name(bool renamedAway)
    {
        await using var a = new DriveRig(s3, Policy.Replace("settle: 0s", "settle: 1h", StringComparison.Ordinal));
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        await a.WriteAsync("f.bin", DriveRig.RandomBytes(4_000, 7));
        var theirs = DriveRig.RandomBytes(5_000, 8);
        await b.WriteAsync("f.bin", theirs);
        await SettleAsync(b);

        RenameAwayOrDelete(a, renamedAway);
        await SettleAsync(a);

        Assert.Equal(theirs, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(theirs, await ReadAtBAsync(b));
        a.Clock.Advance(TimeSpan.FromMinutes(5));
        await a.Engine.BeforeEnumerateAsync("", a.Caller);
        Assert.Equal(theirs, await a.ReadAsync("f.bin"));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// A wrote f.bin again while B's change was on its way: A's upload met B's version, kept A's bytes as a conflict copy and
    /// made f.bin a stub of B's version, which nobody here has opened. Returns B's version and A's.
    /// </summary>
    private static async Task<(byte[] Theirs, byte[] Mine)> ConflictKeptBothAsync(DriveRig a, DriveRig b)
    {
        var (_, changed) = await ChangedElsewhereAsync(a, b);
        var mine = DriveRig.RandomBytes(7_000, 3);
        await a.WriteAsync("f.bin", mine);
        await SettleAsync(a);
        Assert.Contains(a.Engine.ReadEvents(kind: DriveEventKind.Conflict), e => e.Path == "f.bin");
        Assert.Equal(FileState.Stubbed, a.Engine.GetFile("f.bin")!.State);
        return (changed, mine);
    }

    /// <summary>
    /// The user here deletes or overwrites f.bin, aiming at the file they wrote (a command issued as the conflict swapped it,
    /// or on the name alone): the version a conflict put under the name, never opened here, is not replaced in the bucket.
    /// Before, the delete removed B's version (B followed it: lost everywhere) and the overwrite went over it.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_stub_a_conflict_made_of_another_sites_version_deleted_or_overwritten_here_unopened_keeps_that_version(bool overwritten)
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (theirs, mine) = await ConflictKeptBothAsync(a, b);
        var again = DriveRig.RandomBytes(8_000, 4);

        if (overwritten)
        {
            await a.WriteAsync("f.bin", again);
        }
        else
        {
            RenameAwayOrDelete(a, renamedAway: false);
        }
        await SettleAsync(a);

        Assert.Equal(theirs, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(theirs, await ReadAtBAsync(b));
        var copies = a.Engine.FindFiles("*").Select(e => e.Path).Where(p => p.StartsWith("f (conflict ", StringComparison.Ordinal)).ToList();
        var copied = new List<byte[]?>();
        foreach (var copy in copies)
        {
            copied.Add(await a.ObjectBytesAsync(copy));
        }
        Assert.Contains(copied, c => c is not null && c.AsSpan().SequenceEqual(mine));
        if (overwritten)
        {
            Assert.Contains(copied, c => c is not null && c.AsSpan().SequenceEqual(again));
        }
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_stub_a_conflict_made_deleted_here_after_an_open_is_deleted_at_both_sites()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var (theirs, _) = await ConflictKeptBothAsync(a, b);
        Assert.Equal(theirs, await a.ReadAsync("f.bin"));

        RenameAwayOrDelete(a, renamedAway: false);
        await SettleAsync(a);

        Assert.Null(await a.Store.HeadAsync("f.bin"));
        b.Clock.Advance(TimeSpan.FromMinutes(5));
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        Assert.Null(b.Engine.GetFile("f.bin"));
    }

    /// <summary>
    /// B's change lands between A's look at the key (the version A's file knew: a delete to make) and A's DELETE. The delete
    /// names the version looked at (If-Match), which moto refuses over B's; the next tick's look keeps B's change. Before,
    /// the DELETE removed it and B followed. (Ceph 16 ignores a delete's condition: there the window stays one request long.)
    /// </summary>
    [Fact]
    public async Task A_file_deleted_here_while_another_site_changed_it_after_the_deletes_look_keeps_the_change()
    {
        var changed = DriveRig.RandomBytes(6_000, 22);
        DriveRig? other = null;
        DeletesRaced? deletes = null;
        await using var a = new DriveRig(s3, Policy, storeInFront: inner => deletes = new DeletesRaced(inner, "f.bin", async () =>
        {
            await other!.WriteAsync("f.bin", changed);
            await SettleAsync(other);
        }));
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        other = b;
        var first = DriveRig.RandomBytes(5_000, 21);
        await a.WriteAsync("f.bin", first);
        await SettleAsync(a);
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        Assert.Equal(first, await b.ReadAsync("f.bin"));

        RenameAwayOrDelete(a, renamedAway: false);
        await SettleAsync(a);

        Assert.True(deletes!.Raced);
        Assert.Equal(changed, await a.ObjectBytesAsync("f.bin"));
        Assert.Equal(changed, await ReadAtBAsync(b));
        Assert.Contains(a.Engine.ReadEvents(kind: DriveEventKind.Conflict), e => e.Path == "f.bin" && e.Message.Contains("Not deleted", StringComparison.Ordinal));
        Assert.Equal(0, a.Engine.OwedBucketChangeCount);
    }

    /// <summary>Runs <paramref name="meanwhile"/> before the first delete of <paramref name="key"/> reaches the server (a timing seam only: the server's answer is its own).</summary>
    private sealed class DeletesRaced(GeoDrive.Core.Ports.IObjectStore inner, string key, Func<Task> meanwhile) : ForwardingStore(inner)
    {
        public bool Raced { get; private set; }

        public override async Task DeleteAsync(string deleted, CancellationToken cancellationToken = default)
        {
            await RaceAsync(deleted);
            await base.DeleteAsync(deleted, cancellationToken);
        }

        public override async Task DeleteAsync(string deleted, string etag, CancellationToken cancellationToken = default)
        {
            await RaceAsync(deleted);
            await base.DeleteAsync(deleted, etag, cancellationToken);
        }

        private async Task RaceAsync(string deleted)
        {
            if (deleted == key && !Raced)
            {
                Raced = true;
                await meanwhile();
            }
        }
    }

    [Fact]
    public async Task A_file_deleted_here_that_nobody_changed_elsewhere_is_deleted_at_both_sites()
    {
        await using var a = new DriveRig(s3, Policy);
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
        var first = DriveRig.RandomBytes(5_000, 3);
        await a.WriteAsync("f.bin", first);
        await SettleAsync(a);
        await b.Engine.BeforeEnumerateAsync("", b.Caller);
        Assert.Equal(first, await b.ReadAsync("f.bin"));

        RenameAwayOrDelete(b, renamedAway: false);
        await SettleAsync(b);

        Assert.Null(await a.Store.HeadAsync("f.bin"));
        Assert.Empty(b.Engine.ReadEvents(kind: DriveEventKind.Conflict));
        a.Clock.Advance(TimeSpan.FromMinutes(5));
        await a.Engine.BeforeEnumerateAsync("", a.Caller);
        Assert.Null(a.Engine.GetFile("f.bin"));
    }
}
