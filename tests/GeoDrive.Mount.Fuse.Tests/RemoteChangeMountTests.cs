using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// A change another site or tool made in the bucket shows through the mount at once once the drive has
/// followed it, whatever the kernel still held from a moment before (the mount's attribute and entry timeout).
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class RemoteChangeMountTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    [Fact]
    public async Task A_file_deleted_in_the_bucket_is_gone_from_the_mount_as_soon_as_a_listing_followed_the_delete()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: remote-changes }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 0s, updateWait: 0s }
            """));
        var mounted = Mount(rig.Engine);
        Directory.CreateDirectory(Path.Combine(mounted.Root, "docs"));
        var inMount = Path.Combine(mounted.Root, "docs", "gone.txt");
        await File.WriteAllTextAsync(inMount, "deleted elsewhere");
        await mounted.WaitForClosesAsync();
        await rig.Engine.UploadAsync("docs/gone.txt");
        // The kernel now holds the file's entry and attributes.
        Assert.True(File.Exists(inMount));

        await rig.S3.Client.DeleteObjectAsync(rig.Bucket, "docs/gone.txt");
        Assert.DoesNotContain("gone.txt", Directory.GetFiles(Path.Combine(mounted.Root, "docs")).Select(Path.GetFileName));

        Assert.False(File.Exists(inMount), "the mount still shows the file the listing just removed");
        Assert.False(File.Exists(rig.Local("docs/gone.txt")));
    }
}
