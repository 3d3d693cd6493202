using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Two sites on one bucket: a rename here whose copy to the new name races another site's new file of that name. The copy
/// asks what the name holds first; a file written between that question and the copy was replaced by the copy, and the
/// other site then followed the copy and lost its file.
/// </summary>
public sealed class RenameMeetsWriteElsewhereTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string Policy = TwoSites.Policy;

    private static Task SettleAsync(DriveRig rig) => TwoSites.SettleAsync(rig);

    /// <summary>
    /// Site A writes g.bin and its upload lands between B's look at g.bin (empty) and B's copy of f.bin there. The copy
    /// names what it may replace (nothing), and a server that takes a copy's conditions refuses it: B keeps both as for any
    /// name found taken. Stand-in: Ceph 16 and moto ignore a copy's conditions (AWS S3 takes them), so the store in front
    /// of B's answers as AWS S3 does.
    /// </summary>
    [Fact]
    public async Task A_renames_copy_meeting_another_sites_new_file_written_after_its_look_keeps_both_stand_in_for_conditional_copies()
    {
        await using var a = new DriveRig(s3, Policy);
        var theirs = DriveRig.RandomBytes(4_000, 11);
        ConditionalCopies? copies = null;
        await using var b = new DriveRig(s3, Policy, bucket: a.Bucket, storeInFront: inner => copies = new ConditionalCopies(inner, async () =>
        {
            await a.WriteAsync("g.bin", theirs);
            await a.Engine.WhenUploadsIdleAsync();
        }));
        var mine = DriveRig.RandomBytes(5_000, 12);
        await b.WriteAsync("f.bin", mine);
        await SettleAsync(b);

        File.Move(b.Local("f.bin"), b.Local("g.bin"));
        b.Engine.Renamed("f.bin", "g.bin", b.Caller, isDirectory: false);
        await SettleAsync(b);
        await SettleAsync(b);

        Assert.True(copies!.Raced);
        Assert.Equal(theirs, await b.ObjectBytesAsync("g.bin"));
        var conflictCopy = Assert.Single(b.Engine.FindFiles("g (conflict *"));
        Assert.Equal(mine, await b.ObjectBytesAsync(conflictCopy.Path));
        a.Clock.Advance(TimeSpan.FromMinutes(5));
        await a.Engine.BeforeEnumerateAsync("", a.Caller);
        Assert.Equal(theirs, await a.ReadAsync("g.bin"));
        Assert.Equal(0, b.Engine.OwedBucketChangeCount);
    }

    /// <summary>
    /// Runs <paramref name="meanwhile"/> before the first copy (another site's write after the copy's look), then copies as a
    /// server that takes a copy's conditions on its destination does: refused (412, ObjectMismatch) over anything else.
    /// </summary>
    private sealed class ConditionalCopies(IObjectStore inner, Func<Task> meanwhile) : ForwardingStore(inner)
    {
        public bool Raced { get; private set; }

        public override async Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected,
            IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default)
        {
            if (!Raced)
            {
                Raced = true;
                await meanwhile();
            }
            var there = await Inner.HeadAsync(destinationKey, cancellationToken);
            if ((replacing.KeyFree && there is not null) || (replacing.ETag is { } etag && !ObjectLayout.SameETag(there?.ETag, etag)))
            {
                throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData, $"PreconditionFailed on copy to '{destinationKey}' (stand-in).", "none");
            }
            return await Inner.CopyAsync(sourceKey, destinationKey, expected, metadata, observer, replacing, cancellationToken);
        }
    }
}
