using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

public sealed class StubAndRecallTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private async Task<byte[]> CachedFileAsync(string path, int size)
    {
        var content = DriveRig.RandomBytes(size, seed: size + path.Length);
        await _rig.WriteAsync(path, content);
        Assert.Equal(FileState.Cached, (await _rig.Engine.UploadAsync(path)).State);
        return content;
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(10 * 1000 * 1000)]
    public async Task A_stub_frees_its_blocks_keeps_size_and_time_and_recalls_the_same_bytes(int size)
    {
        var content = await CachedFileAsync("scan.bin", size);
        var mtime = File.GetLastWriteTimeUtc(_rig.Local("scan.bin"));

        var entry = await _rig.Engine.StubAsync("scan.bin");

        Assert.Equal(FileState.Stubbed, entry.State);
        Assert.Equal(0, _rig.AllocatedBlocks("scan.bin"));
        Assert.Equal(size, new FileInfo(_rig.Local("scan.bin")).Length);
        Assert.Equal(mtime, File.GetLastWriteTimeUtc(_rig.Local("scan.bin")));

        Assert.Equal(content, await _rig.ReadAsync("scan.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("scan.bin"));
        Assert.Equal(mtime, File.GetLastWriteTimeUtc(_rig.Local("scan.bin")));
    }

    [Fact]
    public async Task A_dirty_file_is_never_stubbed()
    {
        await _rig.WriteAsync("new.txt", "not uploaded"u8.ToArray());

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("new.txt"));

        Assert.Equal(ErrorIds.FileNotUploaded, ex.ErrorId);
        Assert.Contains("Invoke-ForceUpload", ex.Remedy, StringComparison.Ordinal);
        Assert.Equal("not uploaded"u8.ToArray(), await File.ReadAllBytesAsync(_rig.Local("new.txt")));
    }

    [Fact]
    public async Task An_open_file_is_never_stubbed()
    {
        await CachedFileAsync("open.bin", 100);
        await _rig.Engine.OpenAsync("open.bin", _rig.Caller, OpenIntent.Read);

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("open.bin"));

        Assert.Equal(ErrorIds.FileBusy, ex.ErrorId);
        Assert.NotEqual(0, _rig.AllocatedBlocks("open.bin"));
    }

    [Fact]
    public async Task A_file_changed_behind_the_engines_back_is_not_stubbed_and_becomes_dirty()
    {
        await CachedFileAsync("edited.txt", 100);
        // Same size, new bytes, old mtime restored: only the checksum can tell.
        var mtime = File.GetLastWriteTimeUtc(_rig.Local("edited.txt"));
        await File.WriteAllBytesAsync(_rig.Local("edited.txt"), DriveRig.RandomBytes(100, seed: 99));
        File.SetLastWriteTimeUtc(_rig.Local("edited.txt"), mtime);

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("edited.txt"));

        Assert.Equal(ErrorIds.FileNotUploaded, ex.ErrorId);
        Assert.Equal(FileState.Dirty, _rig.StateOf("edited.txt"));
        Assert.Equal(DriveRig.RandomBytes(100, seed: 99), await File.ReadAllBytesAsync(_rig.Local("edited.txt")));
    }

    [Fact]
    public async Task A_file_whose_object_was_replaced_in_the_bucket_follows_it_when_stubbed_and_nothing_is_uploaded_over_it()
    {
        await CachedFileAsync("shared.txt", 100);
        var theirs = DriveRig.RandomBytes(100, seed: 7);
        using (var other = new MemoryStream(theirs))
        {
            await _rig.Store.PutAsync("shared.txt", other, 100, new Dictionary<string, string>());
        }

        var entry = await _rig.Engine.StubAsync("shared.txt");
        _rig.Clock.Advance(TimeSpan.FromHours(1));
        await _rig.Engine.TickAsync();

        // Clean: the bucket's version wins, as at any open; the local copy was never uploaded over it.
        Assert.Equal(FileState.Stubbed, entry.State);
        Assert.Equal(theirs, await _rig.ObjectBytesAsync("shared.txt"));
        Assert.Equal(theirs, await _rig.ReadAsync("shared.txt"));
    }

    [Fact]
    public async Task A_recall_of_a_tampered_object_fails_and_leaves_a_clean_stub()
    {
        await CachedFileAsync("tampered.bin", 5000);
        await _rig.Engine.StubAsync("tampered.bin");
        // Other bytes under the original's metadata: the object claims to be the version recorded, so
        // fileSync at open sees no newer version (an honest replacement would be one) and recall must catch it.
        var original = (await _rig.Store.HeadAsync("tampered.bin"))!;
        using (var other = new MemoryStream(DriveRig.RandomBytes(5000, seed: 8)))
        {
            await _rig.Store.PutAsync("tampered.bin", other, 5000, original.Metadata);
        }

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.ReadAsync("tampered.bin"));

        Assert.Equal(ErrorIds.ObjectMismatch, ex.ErrorId);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("tampered.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("tampered.bin"));
        Assert.Equal(5000, new FileInfo(_rig.Local("tampered.bin")).Length);
    }

    /// <summary>Issue 13: the fast check of recalled bytes is recorded where the SHA-256 is (docs/decisions/0027-recall-checked-by-xxh128.md).</summary>
    [Fact]
    public async Task An_upload_records_the_XXH3_128_of_the_bytes_beside_their_SHA_256_in_the_index_and_the_objects_metadata()
    {
        var content = await CachedFileAsync("checked.bin", 70_000);

        var expected = Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(content));
        Assert.Equal(expected, _rig.Engine.GetFile("checked.bin")!.Xxh128);
        var head = (await _rig.Store.HeadAsync("checked.bin"))!;
        Assert.Equal(expected, head.Metadata[Layout.ObjectLayout.Xxh128Key]);
        Assert.Equal(_rig.Engine.GetFile("checked.bin")!.Checksum, head.Metadata[Layout.ObjectLayout.Sha256Key]);
    }

    /// <summary>
    /// Issue 13: a recall checks its bytes by the recorded XXH3-128 (the SHA-256 is not computed). Bytes whose SHA-256 is
    /// the recorded one but whose recorded XXH3-128 is not theirs are refused: the file stays a clean stub.
    /// </summary>
    [Fact]
    public async Task A_recall_is_checked_by_the_recorded_XXH3_128_and_refused_when_the_bytes_do_not_have_it()
    {
        var content = await CachedFileAsync("fast.bin", 5000);
        await _rig.Engine.StubAsync("fast.bin");
        var entry = _rig.Index.Get("fast.bin")!;
        entry.Xxh128 = new string('0', 32);
        _rig.Index.Put(entry);

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.ReadAsync("fast.bin"));

        Assert.Equal(ErrorIds.ObjectMismatch, ex.ErrorId);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("fast.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("fast.bin"));

        // Its own XXH3-128 recorded again: the same bytes come back.
        entry = _rig.Index.Get("fast.bin")!;
        entry.Xxh128 = Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(content));
        _rig.Index.Put(entry);
        Assert.Equal(content, await _rig.ReadAsync("fast.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("fast.bin"));
    }

    /// <summary>
    /// Issue 13: the check of the local bytes before a stub is by the recorded XXH3-128 too (the SHA-256 is not computed):
    /// bytes that do not have it are never stubbed; the file is Dirty again and its bytes stay.
    /// </summary>
    [Fact]
    public async Task A_stub_is_made_only_over_local_bytes_that_have_the_recorded_XXH3_128()
    {
        var content = await CachedFileAsync("checked-before-stub.bin", 9000);
        var entry = _rig.Index.Get("checked-before-stub.bin")!;
        entry.Xxh128 = new string('0', 32);
        _rig.Index.Put(entry);

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("checked-before-stub.bin"));

        Assert.Equal(ErrorIds.FileNotUploaded, ex.ErrorId);
        Assert.Equal(FileState.Dirty, _rig.StateOf("checked-before-stub.bin"));
        Assert.Equal(content, await File.ReadAllBytesAsync(_rig.Local("checked-before-stub.bin")));
    }

    [Fact]
    public async Task Files_are_stubbed_by_themselves_once_their_access_wait_has_passed()
    {
        await CachedFileAsync("cold.bin", 2000);
        await CachedFileAsync("warm.bin", 2000);

        _rig.Clock.Advance(TimeSpan.FromMinutes(50));
        await _rig.ReadAsync("warm.bin");
        _rig.Clock.Advance(TimeSpan.FromMinutes(11));
        var tick = await _rig.Engine.TickAsync();

        Assert.Equal(1, tick.Stubbed);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("cold.bin"));
        Assert.Equal(FileState.Cached, _rig.StateOf("warm.bin"));
    }

    [Fact]
    public async Task Reading_a_cached_file_again_within_a_second_writes_its_entry_once_and_later_reads_still_move_its_access_time()
    {
        await using var rig = new DriveRig(s3, hookedIndex: true);
        await rig.Engine.StartAsync();
        await rig.WriteAsync("header.h", "#pragma once\n"u8.ToArray());
        await rig.Engine.UploadAsync("header.h");
        var writes = 0;
        rig.Hooks!.BeforePut = entry => writes += entry.Path == "header.h" ? 1 : 0;

        // A build reads the same header hundreds of times a second: its access time (what stubbing's accessWait
        // counts from) is kept to the second, not rewritten in the index at every open and close.
        rig.Clock.Advance(TimeSpan.FromMinutes(5));
        for (var i = 0; i < 50; i++)
        {
            await rig.ReadAsync("header.h");
        }
        var afterFirstSecond = rig.Engine.GetFile("header.h")!;
        var writesInFirstSecond = writes;
        rig.Clock.Advance(TimeSpan.FromSeconds(2));
        await rig.ReadAsync("header.h");

        Assert.Equal(1, writesInFirstSecond);
        Assert.Equal(rig.Clock.UtcNow - TimeSpan.FromSeconds(2), afterFirstSecond.LastAccessUtc);
        Assert.Equal(rig.Clock.UtcNow, rig.Engine.GetFile("header.h")!.LastAccessUtc);
        Assert.Equal(FileState.Cached, rig.StateOf("header.h"));
    }

    [Fact]
    public async Task A_recall_records_Recalling_and_Cached_without_waiting_for_the_index_to_reach_the_disk()
    {
        await using var rig = new DriveRig(s3, hookedIndex: true);
        await rig.Engine.StartAsync();
        var content = DriveRig.RandomBytes(10_000, 7);
        await rig.WriteAsync("small.bin", content);
        await rig.Engine.UploadAsync("small.bin");
        await rig.Engine.StubAsync("small.bin");
        var before = rig.Hooks!.Written.Count;

        // A reader opening a small stub waited for two index flushes (a third of the service's CPU on 10 KB restores):
        // the stub's own mark says Recalling, and a restart checks an unmarked "stub" against its hash instead.
        Assert.Equal(content, await rig.ReadAsync("small.bin"));

        var recall = rig.Hooks.Written.Skip(before).Where(w => w.Path == "small.bin").ToList();
        Assert.Equal([(FileState.Recalling, false), (FileState.Cached, false)], recall.Select(w => (w.State, w.Durable)));
        Assert.Equal(FileState.Cached, rig.StateOf("small.bin"));
        await rig.Engine.RecallFlushes.WhenEmptyAsync();
        Assert.Null(GeoDrive.Engine.Files.StubMark.Read(rig.Local("small.bin")));
    }

    [Fact]
    public async Task Opening_a_stub_to_overwrite_it_does_not_recall_it()
    {
        await CachedFileAsync("overwrite.bin", 3000);
        await _rig.Engine.StubAsync("overwrite.bin");

        await _rig.WriteAsync("overwrite.bin", "new"u8.ToArray());

        Assert.Equal(FileState.Dirty, _rig.StateOf("overwrite.bin"));
        Assert.Equal("new"u8.ToArray(), await File.ReadAllBytesAsync(_rig.Local("overwrite.bin")));
        var entry = await _rig.Engine.UploadAsync("overwrite.bin");
        Assert.Equal(FileState.Cached, entry.State);
        Assert.Equal("new"u8.ToArray(), await _rig.ObjectBytesAsync("overwrite.bin"));
    }

    [Fact]
    public async Task A_new_file_at_a_renamed_stubs_old_path_never_overwrites_the_stubs_only_copy()
    {
        var original = await CachedFileAsync("report.pdf", 4000);
        await _rig.Engine.StubAsync("report.pdf");
        File.Move(_rig.Local("report.pdf"), _rig.Local("report-old.pdf"));
        _rig.Engine.Renamed("report.pdf", "report-old.pdf", _rig.Caller, isDirectory: false);

        var replacement = DriveRig.RandomBytes(3000, seed: 42);
        await _rig.WriteAsync("report.pdf", replacement);
        await _rig.Engine.UploadAsync("report.pdf");
        _rig.Clock.Advance(TimeSpan.FromMinutes(5));
        await _rig.Engine.TickAsync();
        await _rig.Engine.TickAsync();

        Assert.Equal(original, await _rig.ReadAsync("report-old.pdf"));
        Assert.Equal(replacement, await _rig.ReadAsync("report.pdf"));
        Assert.Equal(replacement, await _rig.ObjectBytesAsync("report.pdf"));
        Assert.Equal(original, await _rig.ObjectBytesAsync("report-old.pdf"));
    }
}
