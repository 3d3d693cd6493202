using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Paths longer than the index can hold (LiteDB keys: under 1,023 bytes; a drive path may have 1,000) are
/// refused where they would be made, with ENAMETOOLONG and an event, and never break the drive: through a
/// real FUSE mount, and from the bucket (an object whose key is too long is named in an event, once, and
/// its folder still lists).
/// </summary>
public sealed class LongPathTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private (DriveRig Rig, FuseMountedDrive Mounted) Mount()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: long-paths }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 0s, updateWait: 0s }
            """));
        var mounted = Mount(rig.Engine);
        return (rig, mounted);
    }

    [Fact]
    public async Task Five_nested_250_character_folders_are_refused_as_too_long_at_the_fourth_and_the_drive_keeps_working()
    {
        var (rig, mounted) = Mount();
        var folder = mounted.Root;
        var made = 0;
        IOException? refused = null;
        for (var depth = 1; depth <= 5 && refused is null; depth++)
        {
            folder = Path.Combine(folder, new string((char)('a' + depth), 250));
            try
            {
                Directory.CreateDirectory(folder);
                made++;
            }
            catch (IOException ex)
            {
                refused = ex;
            }
        }

        Assert.Equal(3, made);
        Assert.NotNull(refused);
        Assert.Contains("too long", refused.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Contains(rig.Engine.ReadEvents(), e => e.ErrorId == ErrorIds.PathTooLong);

        // Nothing sticks: a file in the deepest folder that fits, and one at the root, go up; the drive restarts.
        var deep = Path.Combine(mounted.Root, new string('b', 250), new string('c', 250), new string('d', 250), "ok.txt");
        await File.WriteAllTextAsync(deep, "deep");
        await File.WriteAllTextAsync(Path.Combine(mounted.Root, "after.txt"), "after");
        await mounted.WaitForClosesAsync();
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal("after"u8.ToArray(), await rig.ObjectBytesAsync("after.txt"));
        Assert.Equal(FileState.Cached, rig.StateOf(Path.GetRelativePath(mounted.Root, deep)));
    }

    [Fact]
    public async Task An_object_whose_key_is_too_long_for_a_drive_path_is_named_in_an_event_and_its_folder_still_lists()
    {
        var (rig, mounted) = Mount();
        var longKey = "odd/" + new string('k', 1018);
        await s3.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest { BucketName = rig.Bucket, Key = longKey, ContentBody = "x" });
        await s3.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest { BucketName = rig.Bucket, Key = "odd/fine.txt", ContentBody = "fine" });

        var listed = Directory.GetFiles(Path.Combine(mounted.Root, "odd")).Select(Path.GetFileName).ToList();
        Directory.GetFiles(Path.Combine(mounted.Root, "odd"));

        Assert.Equal(["fine.txt"], listed);
        Assert.Equal("fine", await File.ReadAllTextAsync(Path.Combine(mounted.Root, "odd", "fine.txt")));
        Assert.Single(rig.Engine.ReadEvents(), e => e.ErrorId == ErrorIds.HostileObjectKey && e.Message.Contains(longKey[..40], StringComparison.Ordinal));
    }
}
