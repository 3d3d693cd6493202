using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Sync-CloudDrive underneath: a drive made over a bucket that already holds a tree (a new host) gets every stub and
/// every folder, empty ones included, without a single folder having been listed through the mount.
/// </summary>
public sealed class TreeSyncTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private static readonly string[] Files = ["a/top.txt", "a/b/c/deep.txt", "x/y/z.bin", "root.txt"];

    private static async Task<DriveRig> RigOverATreeAsync(S3TestServer s3)
    {
        var rig = new DriveRig(s3);
        foreach (var key in Files)
        {
            await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = key, ContentBody = "bytes of " + key });
        }
        // A folder with nothing in it, as S3 tools keep one: a zero-byte key ending in '/'.
        await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "empty/", ContentBody = "" });
        return rig;
    }

    [Fact]
    public async Task A_whole_tree_becomes_stubs_and_folders_empty_ones_included_and_each_stub_reads_its_bytes()
    {
        await using var rig = await RigOverATreeAsync(s3);
        var seen = new List<TreeSync>();

        var synced = await rig.Engine.SyncTreeAsync("", seen.Add);

        foreach (var folder in new[] { "a", "a/b", "a/b/c", "x", "x/y", "empty" })
        {
            Assert.True(Directory.Exists(rig.Local(folder)), folder);
        }
        Assert.All(Files, f => Assert.Equal(FileState.Stubbed, rig.StateOf(f)));
        Assert.Equal((7, 6, 4L), (synced.Folders, synced.FoldersMade, synced.StubsMade)); // the root and six folders
        Assert.Equal(synced, seen[^1]);
        Assert.Equal(Enumerable.Range(1, 7), seen.Select(p => p.Folders));
        Assert.Equal("bytes of a/b/c/deep.txt"u8.ToArray(), await rig.ReadAsync("a/b/c/deep.txt"));

        // Again: nothing new to make, nothing lost.
        var again = await rig.Engine.SyncTreeAsync("");
        Assert.Equal((7, 0, 0L), (again.Folders, again.FoldersMade, again.StubsMade));
        Assert.Equal(FileState.Cached, rig.StateOf("a/b/c/deep.txt"));
    }

    [Fact]
    public async Task A_folder_never_listed_is_synced_with_the_folders_above_it_and_nothing_beside_it()
    {
        await using var rig = await RigOverATreeAsync(s3);

        var synced = await rig.Engine.SyncTreeAsync("x/y");

        Assert.Equal(FileState.Stubbed, rig.StateOf("x/y/z.bin"));
        Assert.Equal(1, synced.Folders);
        // The folders above were listed to reach it; what lies beside them was not walked into.
        Assert.Null(rig.Engine.GetFile("a/top.txt"));
        Assert.False(Directory.Exists(rig.Local("a/b")));

        var missing = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.SyncTreeAsync("no/such/folder"));
        Assert.Equal(ErrorIds.FileNotFound, missing.ErrorId);
    }
}
