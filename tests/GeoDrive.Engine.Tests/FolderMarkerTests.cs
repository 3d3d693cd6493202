using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Folders made on a drive reach the bucket as zero-byte "name/" markers (issue 14, item 5), so a drive rebuilt on a new
/// host has its empty folders too; a removed folder's marker goes, a renamed folder's markers move, and a marker whose
/// folder was made again is never deleted.
/// </summary>
public sealed class FolderMarkerTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
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
}
