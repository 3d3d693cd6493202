using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Ceph RGW (16) answers every PUT with If-Match into a bucket that keeps versions with 412, even when the object is
/// that very version (and ignores If-None-Match: * there). A changed file must still go up, in one PUT or in parts.
/// </summary>
public sealed class VersionedBucketUploadTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: versioned-upload-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
          transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }
        """;

    [Fact]
    public async Task A_changed_file_goes_up_into_a_Ceph_bucket_that_keeps_versions_though_the_server_refuses_every_If_Match()
    {
        await using var rig = new DriveRig(ceph, SettleZero, multipartThreshold: 5L << 20);
        await KeepVersionsAsync(rig.Bucket);
        foreach (var (path, size) in new[] { ("large.bin", 6 << 20), ("small.txt", 4_000) })
        {
            for (var round = 1; round <= 3; round++)
            {
                var bytes = DriveRig.RandomBytes(size + round, round);
                await rig.WriteAsync(path, bytes);
                await rig.Engine.TickAsync();
                await rig.Engine.WhenUploadsIdleAsync();

                Assert.True(rig.StateOf(path) == FileState.Cached, $"{path}, write {round}: {rig.Engine.GetFile(path)?.LastError}");
                Assert.Equal(bytes, await rig.ObjectBytesAsync(path));
            }
            var versions = await ceph.Client.ListVersionsAsync(new ListVersionsRequest { BucketName = rig.Bucket, Prefix = path });
            Assert.Equal(3, versions.Versions.Count); // each write a version of its own
        }
    }

    [Fact]
    public async Task Versioning_turned_on_while_the_drive_runs_never_lets_a_new_file_replace_another_site_s_object_unseen()
    {
        await using var rig = new DriveRig(ceph, SettleZero);
        await rig.WriteAsync("first.txt", "before versioning"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal(FileState.Cached, rig.StateOf("first.txt")); // the write probe ran: the bucket refused a PUT over a taken key

        await KeepVersionsAsync(rig.Bucket);
        await rig.WriteAsync("second.txt", "after versioning"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        // Another site writes a name this drive has not seen yet, and this drive writes the same name.
        await ceph.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "report.txt", ContentBody = "the other site's report" });
        await rig.WriteAsync("report.txt", "this site's report"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();

        Assert.Equal("the other site's report"u8.ToArray(), await rig.ObjectBytesAsync("report.txt"));
        var keys = await rig.Store.ListAsync("").Select(o => o.Key).ToListAsync();
        var kept = keys.Where(k => k.StartsWith("report", StringComparison.Ordinal) && k != "report.txt").ToList();
        Assert.True(kept.Count == 1, "the local bytes kept under a conflict name: " + string.Join(", ", keys));
        Assert.Equal("this site's report"u8.ToArray(), await rig.ObjectBytesAsync(kept[0]));
    }

    /// <summary>
    /// Issue 13: a changed file's PUT names the version it knew (If-Match) without a HEAD first, where the probe found the
    /// server refuses it over another. Versioning turned on later makes Ceph refuse every If-Match: the edit still goes up,
    /// and another site's write is still kept beside the local one.
    /// </summary>
    [Fact]
    public async Task Versioning_turned_on_while_the_drive_runs_still_takes_a_changed_file_and_keeps_another_site_s_version_of_it()
    {
        await using var rig = new DriveRig(ceph, SettleZero);
        await rig.WriteAsync("notes.txt", "before versioning"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.True(await rig.Store.RefusesPutsOverOtherVersionsAsync(".geodrive/write-probe"));

        await KeepVersionsAsync(rig.Bucket);
        await rig.WriteAsync("notes.txt", "my first edit"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.True(rig.StateOf("notes.txt") == FileState.Cached, rig.Engine.GetFile("notes.txt")?.LastError);
        Assert.Equal("my first edit"u8.ToArray(), await rig.ObjectBytesAsync("notes.txt"));

        await ceph.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "notes.txt", ContentBody = "their edit" });
        await rig.WriteAsync("notes.txt", "my second edit"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();

        Assert.Equal("their edit"u8.ToArray(), await rig.ObjectBytesAsync("notes.txt"));
        var copy = Assert.Single(rig.Engine.FindFiles("notes (conflict *).txt"));
        Assert.Equal("my second edit"u8.ToArray(), await rig.ObjectBytesAsync(copy.Path));
    }

    [Fact]
    public async Task The_server_probes_leave_no_version_and_no_delete_marker_in_a_bucket_that_keeps_versions()
    {
        await using var rig = new DriveRig(ceph, SettleZero);
        await KeepVersionsAsync(rig.Bucket);

        // The first upload asks the server what it checks (a signed body's hash, a PUT for a free key), writing a probe object.
        await rig.WriteAsync("first.txt", "the first upload"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("first.txt"));
        var versions = (await ceph.Client.ListVersionsAsync(new ListVersionsRequest { BucketName = rig.Bucket })).Versions ?? [];
        Assert.Equal(["first.txt"], versions.Select(v => v.Key).Where(k => !k.Contains("write-probe", StringComparison.Ordinal)));
        var probes = versions.Where(v => v.Key.Contains("write-probe", StringComparison.Ordinal)).ToList();
        Assert.True(probes.Count == 0, "left by the probes: " + string.Join(", ", probes.Select(v => $"{v.Key} {v.VersionId}{(v.IsDeleteMarker == true ? " (delete marker)" : "")}")));
    }

    [Fact]
    public async Task Where_deleting_versions_is_refused_the_probe_s_key_is_still_hidden_and_the_upload_goes_on()
    {
        await using var rig = new DriveRig(ceph, SettleZero);
        await KeepVersionsAsync(rig.Bucket);
        await ceph.Client.PutBucketPolicyAsync(new PutBucketPolicyRequest
        {
            BucketName = rig.Bucket,
            Policy = $$"""
                {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObjectVersion",
                  "Resource": "arn:aws:s3:::{{rig.Bucket}}/*"}]}
                """,
        });

        await rig.WriteAsync("first.txt", "the first upload"u8.ToArray());
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("first.txt"));
        var keys = await rig.Store.ListAsync("").Select(o => o.Key).ToListAsync();
        Assert.Equal(["first.txt"], keys);
        var versions = (await ceph.Client.ListVersionsAsync(new ListVersionsRequest { BucketName = rig.Bucket })).Versions ?? [];
        Assert.Contains(versions, v => v.Key.Contains("write-probe", StringComparison.Ordinal) && v.IsDeleteMarker == true);
    }

    private Task KeepVersionsAsync(string bucket) => ceph.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
    {
        BucketName = bucket,
        VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
    });
}
