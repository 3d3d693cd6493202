using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

public sealed class UploadTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    [Fact]
    public async Task A_written_file_waits_for_the_settle_delay_then_reaches_the_bucket_byte_for_byte()
    {
        var content = DriveRig.RandomBytes(1000, seed: 1);
        await _rig.WriteAsync("reports/q1.bin", content);
        Assert.Equal(FileState.Dirty, _rig.StateOf("reports/q1.bin"));

        _rig.Clock.Advance(TimeSpan.FromSeconds(29));
        await _rig.Engine.TickAsync();
        Assert.Equal(FileState.Dirty, _rig.StateOf("reports/q1.bin"));
        Assert.Null(await _rig.ObjectBytesAsync("reports/q1.bin"));

        _rig.Clock.Advance(TimeSpan.FromSeconds(1));
        var tick = await _rig.Engine.TickAsync();
        Assert.Equal(1, tick.Uploaded);
        Assert.Equal(FileState.Cached, _rig.StateOf("reports/q1.bin"));
        Assert.Equal(content, await _rig.ObjectBytesAsync("reports/q1.bin"));
    }

    [Fact]
    public async Task A_suspended_drive_uploads_nothing_until_resumed_and_never_stubs_what_waits()
    {
        var content = DriveRig.RandomBytes(5000, seed: 7);
        _rig.Engine.UploadsSuspended = true;
        await _rig.WriteAsync("waiting.bin", content);

        _rig.Clock.Advance(TimeSpan.FromDays(2));
        var suspended = await _rig.Engine.TickAsync();
        Assert.Equal((0, FileState.Dirty), (suspended.Uploaded, _rig.StateOf("waiting.bin")));
        Assert.Null(await _rig.ObjectBytesAsync("waiting.bin"));

        _rig.Engine.UploadsSuspended = false;
        var resumed = await _rig.Engine.TickAsync();
        Assert.Equal(1, resumed.Uploaded);
        Assert.Equal(content, await _rig.ObjectBytesAsync("waiting.bin"));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(10 * 1000 * 1000)]
    public async Task Upload_records_the_checksum_and_times_as_user_metadata(int size)
    {
        var content = DriveRig.RandomBytes(size, seed: size);
        await _rig.WriteAsync($"f{size}.bin", content);
        var entry = await _rig.Engine.UploadAsync($"f{size}.bin");

        Assert.Equal(FileState.Cached, entry.State);
        var head = await _rig.Store.HeadAsync($"f{size}.bin");
        Assert.NotNull(head);
        Assert.Equal(size, head.Size);
        Assert.Equal(Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(content)), head.Metadata["geodrive-sha256"]);
        Assert.Equal(entry.ModifiedUtc, DateTimeOffset.Parse(head.Metadata["geodrive-mtime"], System.Globalization.CultureInfo.InvariantCulture));
        Assert.Equal(content, await _rig.ObjectBytesAsync($"f{size}.bin"));
    }

    [Theory]
    [InlineData("build/output.tmp")]
    [InlineData("Scratch/notes.txt")]
    [InlineData("Scratch/deep/er/notes.txt")]
    public async Task A_file_matching_an_exclude_never_reaches_the_bucket(string path)
    {
        await _rig.WriteAsync(path, [1, 2, 3]);
        Assert.Equal(FileState.Excluded, _rig.StateOf(path));

        _rig.Clock.Advance(TimeSpan.FromDays(400));
        await _rig.Engine.TickAsync();
        await _rig.Engine.UploadAsync(path);

        Assert.Equal(FileState.Excluded, _rig.StateOf(path));
        Assert.Null(await _rig.Store.HeadAsync(path));
    }

    [Fact]
    public async Task A_file_changed_again_before_its_settle_delay_passed_waits_for_a_new_settle_delay()
    {
        await _rig.WriteAsync("draft.txt", "one"u8.ToArray());
        _rig.Clock.Advance(TimeSpan.FromSeconds(20));
        await _rig.WriteAsync("draft.txt", "two"u8.ToArray());
        _rig.Clock.Advance(TimeSpan.FromSeconds(20));
        await _rig.Engine.TickAsync();
        Assert.Equal(FileState.Dirty, _rig.StateOf("draft.txt"));

        _rig.Clock.Advance(TimeSpan.FromSeconds(10));
        await _rig.Engine.TickAsync();
        Assert.Equal("two"u8.ToArray(), await _rig.ObjectBytesAsync("draft.txt"));
    }

    [Fact]
    public async Task A_deleted_file_loses_its_object_at_the_next_pass()
    {
        await _rig.WriteAsync("old.txt", "bye"u8.ToArray());
        await _rig.Engine.UploadAsync("old.txt");
        Assert.NotNull(await _rig.Store.HeadAsync("old.txt"));

        File.Delete(_rig.Local("old.txt"));
        _rig.Engine.Deleted("old.txt", _rig.Caller, isDirectory: false);
        await _rig.Engine.TickAsync();

        Assert.Null(_rig.Engine.GetFile("old.txt"));
        Assert.Null(await _rig.Store.HeadAsync("old.txt"));
    }

    [Fact]
    public async Task A_renamed_file_is_copied_under_its_new_key_in_the_bucket_and_the_old_key_goes()
    {
        await _rig.WriteAsync("a/before.txt", "data"u8.ToArray());
        await _rig.Engine.UploadAsync("a/before.txt");

        Directory.CreateDirectory(_rig.Local("b"));
        File.Move(_rig.Local("a/before.txt"), _rig.Local("b/after.txt"));
        _rig.Engine.Renamed("a/before.txt", "b/after.txt", _rig.Caller, isDirectory: false);
        // Clean: copied server side, never uploaded again.
        Assert.Equal(FileState.Cached, _rig.StateOf("b/after.txt"));

        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await _rig.Engine.TickAsync();
        await _rig.Engine.TickAsync();

        Assert.Equal("data"u8.ToArray(), await _rig.ObjectBytesAsync("b/after.txt"));
        Assert.Null(await _rig.Store.HeadAsync("a/before.txt"));
    }
}
