using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Folders made on a drive reach the bucket as zero-byte "name/" markers (issue 14, item 5), so a drive rebuilt on a new
/// host has its empty folders too; a removed folder's marker goes, a renamed folder's markers move, and a marker whose
/// folder was made again is never deleted.
/// </summary>
public sealed class FolderMarkerTests(S3ServerFixture s3, ITestOutputHelper output) : IClassFixture<S3ServerFixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: folder-tests }
        spec:
          upload: { settle: 0s }
          excludes: [ "**/build/" ]
        """;

    private static void MakeFolder(DriveRig rig, string path)
    {
        Directory.CreateDirectory(rig.Local(path));
        rig.Engine.Created(path, rig.Caller, isDirectory: true);
    }

    private static async Task<string[]> MarkersAsync(DriveRig rig)
    {
        var keys = new List<string>();
        await foreach (var listed in rig.Store.ListAsync("", recursive: true))
        {
            if (listed.Key.EndsWith('/'))
            {
                keys.Add(listed.Key);
            }
        }
        return [.. keys.Order(StringComparer.Ordinal)];
    }

    [Fact]
    public async Task Empty_folders_made_here_are_made_on_a_new_host_and_excluded_ones_are_not()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        MakeFolder(rig, "projects");
        MakeFolder(rig, "projects/2026");
        MakeFolder(rig, "projects/2026/empty");
        MakeFolder(rig, "projects/build");
        await rig.Engine.TickAsync();

        Assert.Equal(["projects/", "projects/2026/", "projects/2026/empty/"], await MarkersAsync(rig));
        Assert.Equal(0, (await rig.Store.HeadAsync("projects/2026/empty/"))!.Size);

        await using var newHost = new DriveRig(s3, SettleZero, bucket: rig.Bucket);
        await newHost.Engine.SyncTreeAsync("");
        Assert.True(Directory.Exists(newHost.Local("projects/2026/empty")));
        Assert.False(Directory.Exists(newHost.Local("projects/build")));
    }

    [Fact]
    public async Task A_removed_folder_s_marker_goes_a_renamed_tree_s_markers_move_and_a_folder_made_again_keeps_its_marker()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        MakeFolder(rig, "a");
        MakeFolder(rig, "a/b");
        MakeFolder(rig, "gone");
        await rig.Engine.TickAsync();

        Directory.Move(rig.Local("a"), rig.Local("c"));
        rig.Engine.Renamed("a", "c", rig.Caller, isDirectory: true);
        Directory.Delete(rig.Local("gone"));
        rig.Engine.Deleted("gone", rig.Caller, isDirectory: true);
        // Made again before its marker's delete was paid: the new folder's marker must stay.
        MakeFolder(rig, "a");
        await rig.Engine.TickAsync();
        await rig.Engine.TickAsync();

        Assert.Equal(["a/", "c/", "c/b/"], await MarkersAsync(rig));
    }

    [Fact]
    public async Task A_folder_removed_here_stays_removed_on_a_server_that_still_lists_its_prefix_as_moto_does_for_a_bucket_that_keeps_versions()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        await s3.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
        {
            BucketName = rig.Bucket,
            VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
        });
        MakeFolder(rig, "reports");
        MakeFolder(rig, "reports/2025");
        MakeFolder(rig, "reports/2025/q4");
        await rig.Engine.TickAsync();
        Assert.Equal(["reports/", "reports/2025/", "reports/2025/q4/"], await MarkersAsync(rig));

        // rm -rf reports/2025: removed bottom up, each folder's marker deleted (a delete marker where the bucket keeps versions).
        foreach (var folder in new[] { "reports/2025/q4", "reports/2025" })
        {
            Directory.Delete(rig.Local(folder));
            rig.Engine.Deleted(folder, rig.Caller, isDirectory: true);
        }
        await rig.Engine.TickAsync();
        Assert.Equal(["reports/"], await MarkersAsync(rig));
        var listed = await s3.Client.ListObjectsV2Async(new ListObjectsV2Request { BucketName = rig.Bucket, Prefix = "reports/", Delimiter = "/" });
        output.WriteLine($"the server lists the removed folder's prefix: {(listed.CommonPrefixes ?? []).Contains("reports/2025/")} (moto does; Ceph RGW and AWS S3 do not)");

        // Listed, and looked up by name, after updateWait: the removed folder is not made again.
        rig.Clock.Advance(TimeSpan.FromHours(1));
        await rig.Engine.BeforeEnumerateAsync("reports", rig.Caller);
        Assert.False(Directory.Exists(rig.Local("reports/2025")));
        Assert.False(await rig.Engine.LookupMissingAsync("reports/2025", rig.Caller));
        Assert.False(Directory.Exists(rig.Local("reports/2025")));

        // Another site writes a file there: the folder is back, with it.
        await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "reports/2025/summary.txt", ContentBody = "from another site" });
        rig.Clock.Advance(TimeSpan.FromHours(1));
        await rig.Engine.BeforeEnumerateAsync("reports", rig.Caller);
        Assert.True(Directory.Exists(rig.Local("reports/2025")));
    }
}
