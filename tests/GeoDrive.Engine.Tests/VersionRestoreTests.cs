using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Get-CloudFileVersion and Restore-CloudFile underneath: on Ceph RGW with versioning on, every version of an overwritten
/// file and a deleted file come back, each restore is a new version (none is lost), and a restore never replaces bytes
/// the bucket does not hold.
/// </summary>
public sealed class VersionRestoreTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: version-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    private static async Task<DriveRig> VersionedRigAsync(S3TestServer s3)
    {
        var rig = new DriveRig(s3, SettleZero);
        await s3.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
        {
            BucketName = rig.Bucket,
            VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
        });
        return rig;
    }

    private static async Task WriteAndUploadAsync(DriveRig rig, string path, byte[] bytes)
    {
        await rig.WriteAsync(path, bytes);
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.True(FileState.Cached == rig.StateOf(path), rig.Engine.GetFile(path)?.LastError + " | " + string.Join(" | ", rig.Engine.ReadEvents().Select(e => e.Kind + ": " + e.Message)));
    }

    private static async Task<byte[]> VersionBytesAsync(DriveRig rig, string key, string versionId)
    {
        using var response = await rig.S3.Client.GetObjectAsync(new GetObjectRequest { BucketName = rig.Bucket, Key = key, VersionId = versionId });
        using var copy = new MemoryStream();
        await response.ResponseStream.CopyToAsync(copy);
        return copy.ToArray();
    }

    [Fact]
    public async Task Every_version_of_an_overwritten_file_comes_back_as_a_new_version_and_a_deleted_file_returns_as_a_stub()
    {
        await using var rig = await VersionedRigAsync(ceph);
        byte[][] written = [DriveRig.RandomBytes(3_000, 1), DriveRig.RandomBytes(5_000, 2), DriveRig.RandomBytes(7_000, 3)];
        foreach (var bytes in written)
        {
            await WriteAndUploadAsync(rig, "plans/site.dwg", bytes);
        }

        var versions = await rig.Engine.GetVersionsAsync("plans/site.dwg");
        Assert.Equal([7_000L, 5_000, 3_000], versions.Select(v => v.Size));
        Assert.Equal([true, false, false], versions.Select(v => v.IsLatest));
        Assert.DoesNotContain(versions, v => v.IsDeleteMarker);
        var ids = versions.Select(v => v.VersionId).Reverse().ToArray(); // oldest first, as written

        for (var i = 0; i < written.Length; i++)
        {
            var restored = await rig.Engine.RestoreVersionAsync("plans/site.dwg", ids[i], deleted: false);
            Assert.Equal(FileState.Stubbed, restored.State);
            Assert.Equal(0, rig.AllocatedBlocks("plans/site.dwg"));
            Assert.Equal(written[i], await rig.ReadAsync("plans/site.dwg"));
            Assert.Equal(written[i], await rig.ObjectBytesAsync("plans/site.dwg"));
        }
        var after = await rig.Engine.GetVersionsAsync("plans/site.dwg");
        Assert.Equal([7_000L, 5_000, 3_000, 7_000, 5_000, 3_000], after.Select(v => v.Size)); // each restore a version of its own
        for (var i = 0; i < written.Length; i++)
        {
            Assert.Equal(written[i], await VersionBytesAsync(rig, "plans/site.dwg", ids[i]));
        }
        // The current version named: nothing is copied, the file stays as it is.
        Assert.Equal(FileState.Cached, (await rig.Engine.RestoreVersionAsync("plans/site.dwg", after[0].VersionId, deleted: false)).State);
        Assert.Equal(6, (await rig.Engine.GetVersionsAsync("plans/site.dwg")).Count);

        File.Delete(rig.Local("plans/site.dwg"));
        rig.Engine.Deleted("plans/site.dwg", rig.Caller, isDirectory: false);
        await rig.Engine.TickAsync();
        Assert.True((await rig.Engine.GetVersionsAsync("plans/site.dwg"))[0].IsDeleteMarker, "the delete reached the bucket");
        Assert.Null(rig.Engine.GetFile("plans/site.dwg"));

        var back = await rig.Engine.RestoreVersionAsync("plans/site.dwg", versionId: null, deleted: true);

        Assert.Equal((FileState.Stubbed, 7_000L), (back.State, back.Size));
        Assert.Equal(written[2], await rig.ReadAsync("plans/site.dwg"));
        Assert.Equal(written[2], await rig.ObjectBytesAsync("plans/site.dwg"));
        var events = rig.Engine.ReadEvents(kind: DriveEventKind.Restore);
        Assert.Equal(4, events.Count);
    }

    [Fact]
    public async Task A_file_deleted_with_its_folder_comes_back_with_the_folder_from_the_version_named()
    {
        await using var rig = await VersionedRigAsync(ceph);
        var first = DriveRig.RandomBytes(2_000, 4);
        await WriteAndUploadAsync(rig, "old/deep/report.pdf", first);
        await WriteAndUploadAsync(rig, "old/deep/report.pdf", DriveRig.RandomBytes(2_500, 5));
        var firstId = (await rig.Engine.GetVersionsAsync("old/deep/report.pdf"))[1].VersionId;
        File.Delete(rig.Local("old/deep/report.pdf"));
        rig.Engine.Deleted("old/deep/report.pdf", rig.Caller, isDirectory: false);
        Directory.Delete(rig.Local("old"), recursive: true);
        rig.Engine.Deleted("old/deep", rig.Caller, isDirectory: true);
        rig.Engine.Deleted("old", rig.Caller, isDirectory: true);
        await rig.Engine.TickAsync();

        var back = await rig.Engine.RestoreVersionAsync("old/deep/report.pdf", firstId, deleted: true);

        Assert.Equal(FileState.Stubbed, back.State);
        Assert.Equal(first, await rig.ReadAsync("old/deep/report.pdf"));
    }

    [Fact]
    public async Task Changes_not_yet_uploaded_are_never_replaced_by_a_restore_and_refusals_name_the_remedy()
    {
        await using var rig = await VersionedRigAsync(ceph);
        await WriteAndUploadAsync(rig, "notes.txt", "first"u8.ToArray());
        var firstId = (await rig.Engine.GetVersionsAsync("notes.txt"))[0].VersionId;
        await rig.WriteAsync("notes.txt", "second, not uploaded"u8.ToArray());

        var dirty = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.RestoreVersionAsync("notes.txt", firstId, deleted: false));

        Assert.Equal(ErrorIds.FileNotUploaded, dirty.ErrorId);
        Assert.Contains("Invoke-ForceUpload", dirty.Remedy);
        Assert.Equal("second, not uploaded"u8.ToArray(), await File.ReadAllBytesAsync(rig.Local("notes.txt")));
        Assert.Single(await rig.Engine.GetVersionsAsync("notes.txt"));

        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        var notDeleted = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.RestoreVersionAsync("notes.txt", null, deleted: true));
        Assert.Equal(ErrorIds.FileNotDeleted, notDeleted.ErrorId);
        var unknown = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.RestoreVersionAsync("notes.txt", "no-such-version", deleted: false));
        Assert.Equal(ErrorIds.VersionNotFound, unknown.ErrorId);
        Assert.Contains("Get-CloudFileVersion", unknown.Remedy);
        var none = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.RestoreVersionAsync("never.txt", null, deleted: true));
        Assert.Equal(ErrorIds.FileNotFound, none.ErrorId);

        File.Delete(rig.Local("notes.txt"));
        rig.Engine.Deleted("notes.txt", rig.Caller, isDirectory: false);
        await rig.Engine.TickAsync();
        var marker = (await rig.Engine.GetVersionsAsync("notes.txt"))[0];
        Assert.True(marker.IsDeleteMarker);
        var onMarker = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.RestoreVersionAsync("notes.txt", marker.VersionId, deleted: true));
        Assert.Equal(ErrorIds.VersionNotFound, onMarker.ErrorId);
        Assert.Equal("second, not uploaded"u8.ToArray(), await rig.ObjectBytesAsync("notes.txt") is null
            ? await VersionBytesAsync(rig, "notes.txt", (await rig.Engine.GetVersionsAsync("notes.txt"))[1].VersionId)
            : null);
    }

    [Fact]
    public async Task The_store_says_whether_the_bucket_keeps_versions()
    {
        await using var versioned = await VersionedRigAsync(ceph);
        await using var plain = new DriveRig(ceph, SettleZero);

        Assert.True(await versioned.Store.KeepsVersionsAsync());
        Assert.False(await plain.Store.KeepsVersionsAsync());
    }

    [Fact]
    public async Task A_version_another_site_wrote_is_restored_as_this_site_s_write_with_its_own_time_and_bytes()
    {
        await using var rig = await VersionedRigAsync(ceph);
        var mtime = new DateTimeOffset(2024, 3, 1, 8, 30, 0, TimeSpan.Zero);
        async Task<string> PutFromSiteBAsync(string body)
        {
            var request = new PutObjectRequest { BucketName = rig.Bucket, Key = "shared/minutes.txt", ContentBody = body };
            request.Metadata["geodrive-site"] = "site-b";
            request.Metadata["geodrive-mtime"] = mtime.UtcDateTime.ToString("O", System.Globalization.CultureInfo.InvariantCulture);
            return (await rig.S3.Client.PutObjectAsync(request)).VersionId;
        }
        var first = await PutFromSiteBAsync("site B's first minutes");
        await PutFromSiteBAsync("site B's second minutes");
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        await rig.Engine.BeforeEnumerateAsync("shared", rig.Caller);
        Assert.Equal(FileState.Stubbed, rig.StateOf("shared/minutes.txt"));

        var restored = await rig.Engine.RestoreVersionAsync("shared/minutes.txt", first, deleted: false);

        var head = await rig.Store.HeadAsync("shared/minutes.txt");
        Assert.Equal(rig.Engine.SiteId, head!.Metadata["geodrive-site"]);
        Assert.Equal(mtime, restored.ModifiedUtc);
        Assert.Equal(mtime.UtcDateTime, File.GetLastWriteTimeUtc(rig.Local("shared/minutes.txt")));
        Assert.Equal("site B's first minutes"u8.ToArray(), await rig.ReadAsync("shared/minutes.txt"));
    }

    /// <summary>Another site's write lands between the restore's listing and its copy (a hook on the store holds that moment).</summary>
    private sealed class WriteBeforeRestoreStore(Core.Ports.IObjectStore inner, Func<Task> write) : ForwardingStore(inner)
    {
        public override async Task<ObjectInfo> RestoreVersionAsync(string key, string versionId, IReadOnlyDictionary<string, string> metadataChanges, CancellationToken cancellationToken = default)
        {
            await write();
            return await base.RestoreVersionAsync(key, versionId, metadataChanges, cancellationToken);
        }
    }

    [Fact]
    public async Task A_version_another_site_writes_while_the_restore_runs_is_kept_and_named_in_an_event_hooked_store()
    {
        string? bucket = null;
        string? written = null;
        S3TestServer s3 = ceph;
        var rig = new DriveRig(s3, SettleZero, storeInFront: inner => new WriteBeforeRestoreStore(inner, async () =>
        {
            var put = await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = bucket, Key = "report.docx", ContentBody = "the other site's edit" });
            written = put.VersionId;
        }));
        await using var _ = rig;
        bucket = rig.Bucket;
        await s3.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
        {
            BucketName = rig.Bucket,
            VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
        });
        await WriteAndUploadAsync(rig, "report.docx", DriveRig.RandomBytes(2_000, 1));
        await WriteAndUploadAsync(rig, "report.docx", DriveRig.RandomBytes(3_000, 2));
        var oldest = (await rig.Engine.GetVersionsAsync("report.docx"))[^1].VersionId;

        await rig.Engine.RestoreVersionAsync("report.docx", oldest, deleted: false);

        Assert.NotNull(written);
        var conflict = Assert.Single(rig.Engine.ReadEvents(kind: DriveEventKind.Conflict));
        Assert.Contains(written, conflict.Message, StringComparison.Ordinal);
        Assert.Equal("the other site's edit"u8.ToArray(), await VersionBytesAsync(rig, "report.docx", written));
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task A_property_change_that_changes_nothing_adds_no_version_and_one_that_does_adds_one_of_the_same_bytes()
    {
        await using var rig = await VersionedRigAsync(ceph);
        var bytes = DriveRig.RandomBytes(3_000, 41);
        await WriteAndUploadAsync(rig, "minutes.txt", bytes);

        // As a chmod to the mode the file has, or the kernel's setattr of the time it has: the mount tells the engine all the same.
        rig.Engine.PropertiesChanged("minutes.txt", rig.Caller);
        await rig.Engine.TickAsync();
        Assert.Single(await rig.Store.ListVersionsAsync("minutes.txt"));

        File.SetUnixFileMode(rig.Local("minutes.txt"), UnixFileMode.UserRead);
        rig.Engine.PropertiesChanged("minutes.txt", rig.Caller);
        await rig.Engine.TickAsync();
        Assert.Equal(2, (await rig.Store.ListVersionsAsync("minutes.txt")).Count);
        Assert.Equal("400", (await rig.Store.HeadAsync("minutes.txt"))!.Metadata[ObjectLayout.ModeKey]);
        Assert.Equal(bytes, await rig.ObjectBytesAsync("minutes.txt"));
    }
}
