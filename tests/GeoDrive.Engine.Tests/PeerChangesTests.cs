using Amazon.S3.Model;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// What a drive does with the keys a peer told it of (DriveEngine.FollowPeerChangesAsync): the bucket decides, the notice
/// only says where to look. updateWait is long, so nothing but the notice syncs.
/// </summary>
public sealed class PeerChangesTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: peer-changes }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s, updateWait: 1h }
          excludes: [ "**/*.tmp" ]
        """;

    private DriveRig _rig = null!;

    private DriveEngine Engine => _rig.Engine;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3, Policy);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private Task PutRawAsync(string key, string content) =>
        _rig.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = _rig.Bucket, Key = key, ContentBody = content });

    [Fact]
    public async Task A_told_key_in_folders_the_drive_never_had_becomes_a_stub_with_its_folders_and_its_neighbours()
    {
        await PutRawAsync("a/b/c/told.txt", "told");
        await PutRawAsync("a/b/c/untold.txt", "untold");
        await PutRawAsync("a/elsewhere.txt", "elsewhere");

        var done = await Engine.FollowPeerChangesAsync(["a/b/c/told.txt"]);

        Assert.Equal(FileState.Stubbed, _rig.StateOf("a/b/c/told.txt"));
        // The folder is synced as a listing would sync it: what else it holds shows too.
        Assert.Equal(FileState.Stubbed, _rig.StateOf("a/b/c/untold.txt"));
        // The folders above were listed to make the path, so their files show as well.
        Assert.Equal(FileState.Stubbed, _rig.StateOf("a/elsewhere.txt"));
        Assert.Equal(4, done.Folders);
        Assert.Equal("told", System.Text.Encoding.UTF8.GetString(await _rig.ReadAsync("a/b/c/told.txt")));
    }

    [Fact]
    public async Task A_told_delete_of_a_file_the_bucket_still_holds_changes_nothing_and_a_real_one_is_followed()
    {
        await _rig.WriteAsync("keep.txt", "kept"u8.ToArray());
        await Engine.UploadAsync("keep.txt");
        await _rig.WriteAsync("gone.txt", "gone"u8.ToArray());
        await Engine.UploadAsync("gone.txt");
        await _rig.WriteAsync("local.txt", "not yet uploaded"u8.ToArray());
        await _rig.Store.DeleteAsync("gone.txt");

        // A forged or stale notice says all three were deleted; only the bucket's answer counts.
        await Engine.FollowPeerChangesAsync(["keep.txt", "gone.txt", "local.txt"]);

        Assert.Equal(FileState.Cached, _rig.StateOf("keep.txt"));
        Assert.Equal("kept"u8.ToArray(), await File.ReadAllBytesAsync(_rig.Local("keep.txt")));
        Assert.Null(Engine.GetFile("gone.txt"));
        Assert.False(File.Exists(_rig.Local("gone.txt")));
        Assert.Equal(FileState.Dirty, _rig.StateOf("local.txt"));
    }

    [Fact]
    public async Task A_told_put_of_a_newer_version_makes_a_clean_file_a_stub_of_it()
    {
        await _rig.WriteAsync("table.csv", "first"u8.ToArray());
        await Engine.UploadAsync("table.csv");
        await PutRawAsync("table.csv", "second, longer");

        var done = await Engine.FollowPeerChangesAsync(["table.csv"]);

        Assert.Equal(1, done.Followed);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("table.csv"));
        Assert.Equal("second, longer", System.Text.Encoding.UTF8.GetString(await _rig.ReadAsync("table.csv")));
    }

    [Fact]
    public async Task Keys_outside_the_drive_excluded_or_hostile_are_skipped()
    {
        await PutRawAsync("scratch.tmp", "excluded");

        await Engine.FollowPeerChangesAsync(["scratch.tmp", "../escape.txt", ".geodrive/index.db"]);

        Assert.Null(Engine.GetFile("scratch.tmp"));
        Assert.False(File.Exists(_rig.Local("scratch.tmp")));
        Assert.False(File.Exists(Path.Combine(_rig.CachePath, "..", "escape.txt")));
    }

    [Fact]
    public async Task An_upload_a_delete_and_a_rename_are_each_told_once_done()
    {
        var told = new List<BucketChangeMade>();
        Engine.BucketChangeMade += told.Add;
        await _rig.WriteAsync("one.txt", "one"u8.ToArray());
        await Engine.UploadAsync("one.txt");
        Assert.Equal([new BucketChangeMade(BucketChangeMadeKind.Put, "one.txt")], told);

        Directory.CreateDirectory(_rig.Local("done"));
        File.Move(_rig.Local("one.txt"), _rig.Local("done/uno.txt"));
        Engine.Renamed("one.txt", "done/uno.txt", _rig.Caller, isDirectory: false);
        await Engine.TickAsync();
        Assert.Contains(new BucketChangeMade(BucketChangeMadeKind.Rename, "done/uno.txt", "one.txt"), told);
        Assert.Contains(new BucketChangeMade(BucketChangeMadeKind.Delete, "one.txt"), told);

        File.Delete(_rig.Local("done/uno.txt"));
        Engine.Deleted("done/uno.txt", _rig.Caller, isDirectory: false);
        await Engine.TickAsync();
        Assert.Contains(new BucketChangeMade(BucketChangeMadeKind.Delete, "done/uno.txt"), told);
    }
}
