using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>upload.mode sync through a real mount: close(2) returns only after the object is verified in the bucket.</summary>
public sealed class SyncUploadTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string SyncPolicy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: sync-tests }
        spec:
          upload: { mode: sync, settle: 1h }
          excludes: [ "**/*.tmp" ]
        """;

    private readonly DriveRig _rig = new(s3, SyncPolicy);
    private readonly TempDirectory _mountFolder = new("mnt");
    private FuseMountedDrive _mounted = null!;

    public Task InitializeAsync()
    {
        _mounted = new FuseMountedDrive(_rig.Engine, _mountFolder.Path);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _mounted.DisposeAsync();
        await _rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted.Root, path);

    [Fact]
    public async Task When_WriteAllBytes_returns_the_object_is_already_in_the_bucket_with_the_right_bytes()
    {
        var content = DriveRig.RandomBytes(300_000, 7);

        File.WriteAllBytes(Mounted("report.bin"), content);

        // No waiting and no tick (settle is an hour on a manual clock): the close itself uploaded.
        Assert.Equal(content, await _rig.ObjectBytesAsync("report.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("report.bin"));
    }

    [Fact]
    public async Task When_a_FileStream_is_disposed_the_object_holds_the_last_bytes_written_and_stays_Cached()
    {
        File.WriteAllBytes(Mounted("log.txt"), "first"u8.ToArray());
        using (var stream = new FileStream(Mounted("log.txt"), FileMode.Append, FileAccess.Write))
        {
            stream.Write(" second"u8);
        }

        Assert.Equal("first second"u8.ToArray(), await _rig.ObjectBytesAsync("log.txt"));
        await _mounted.WaitForClosesAsync();
        // The last close does not report the change again: nothing is left to upload.
        Assert.Equal(FileState.Cached, _rig.StateOf("log.txt"));
        _rig.Clock.Advance(TimeSpan.FromHours(2));
        Assert.Equal(0, (await _rig.Engine.TickAsync()).Uploaded);
    }

    [Fact]
    public async Task An_excluded_file_is_not_uploaded_even_in_sync_mode()
    {
        File.WriteAllBytes(Mounted("scratch.tmp"), [1, 2, 3]);

        Assert.Null(await _rig.ObjectBytesAsync("scratch.tmp"));
        Assert.Equal(FileState.Excluded, _rig.StateOf("scratch.tmp"));
    }

    [Fact]
    public async Task A_file_only_read_is_not_uploaded_again_on_close()
    {
        File.WriteAllBytes(Mounted("read.bin"), [9, 9]);
        // The kernel sends the write's release after close() returned: counted once it is in.
        await _mounted.WaitForClosesAsync();
        var uploads = _rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count;

        Assert.Equal([9, 9], File.ReadAllBytes(Mounted("read.bin")));
        await _mounted.WaitForClosesAsync();

        Assert.Equal(uploads, _rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count);
    }
}

/// <summary>The same mount in async mode (the default): close returns before any upload; the tick uploads after settle.</summary>
public sealed class AsyncUploadThroughMountTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private readonly DriveRig _rig = new(s3);
    private readonly TempDirectory _mountFolder = new("mnt");
    private FuseMountedDrive _mounted = null!;

    public Task InitializeAsync()
    {
        _mounted = new FuseMountedDrive(_rig.Engine, _mountFolder.Path);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _mounted.DisposeAsync();
        await _rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    [Fact]
    public async Task In_async_mode_close_does_not_upload_and_the_change_is_still_reported_at_the_last_close()
    {
        File.WriteAllBytes(Path.Combine(_mounted.Root, "a.bin"), [1, 2, 3]);
        await _mounted.WaitForClosesAsync();

        Assert.Null(await _rig.ObjectBytesAsync("a.bin"));
        Assert.Equal(FileState.Dirty, _rig.StateOf("a.bin"));
        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await _rig.Engine.TickAsync();
        Assert.Equal([1, 2, 3], await _rig.ObjectBytesAsync("a.bin"));
    }

    [Fact]
    public async Task A_drive_turned_to_sync_mode_uploads_at_the_close_of_files_opened_after_and_still_uploads_one_opened_before()
    {
        // Opened while the drive is async: its open asked the kernel for no flush, so its close cannot upload.
        await using var before = new FileStream(Path.Combine(_mounted.Root, "before.bin"), FileMode.CreateNew, FileAccess.Write);
        before.Write([4, 5, 6]);
        _rig.UsePolicy("""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: turned-sync }
            spec:
              upload: { mode: sync, settle: 1h }
            """);

        File.WriteAllBytes(Path.Combine(_mounted.Root, "after.bin"), [7, 8, 9]);
        Assert.Equal([7, 8, 9], await _rig.ObjectBytesAsync("after.bin"));

        await before.DisposeAsync();
        await _mounted.WaitForClosesAsync();
        Assert.Equal(FileState.Dirty, _rig.StateOf("before.bin"));
        _rig.Clock.Advance(TimeSpan.FromHours(2));
        await _rig.Engine.TickAsync();
        Assert.Equal([4, 5, 6], await _rig.ObjectBytesAsync("before.bin"));
    }
}
