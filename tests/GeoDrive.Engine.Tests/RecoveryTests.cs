using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>What a restart finds after a crash: the index says what was under way; nothing is lost.</summary>
public sealed class RecoveryTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    [Fact]
    public async Task An_upload_interrupted_by_a_crash_is_done_again_after_restart()
    {
        await _rig.WriteAsync("interrupted.bin", DriveRig.RandomBytes(4096, 1));
        var entry = _rig.Index.Get("interrupted.bin")!;
        entry.State = FileState.Uploading;
        _rig.Index.Put(entry);

        var report = await _rig.RestartAsync();
        Assert.Equal(1, report.UploadsResumed);
        Assert.Equal(FileState.Dirty, _rig.StateOf("interrupted.bin"));

        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await _rig.Engine.TickAsync();
        Assert.Equal(DriveRig.RandomBytes(4096, 1), await _rig.ObjectBytesAsync("interrupted.bin"));
    }

    [Fact]
    public async Task A_recall_interrupted_by_a_crash_leaves_a_stub_that_recalls_after_restart()
    {
        var content = await StubbedAsync("half.bin", seed: 2);
        // The crash: the index says Recalling and half the bytes are written.
        var entry = _rig.Index.Get("half.bin")!;
        entry.State = FileState.Recalling;
        _rig.Index.Put(entry);
        using (var f = new FileStream(_rig.Local("half.bin"), FileMode.Open, FileAccess.Write))
        {
            f.Write(content, 0, 4096);
        }

        var report = await _rig.RestartAsync();

        Assert.Equal(1, report.StubsRepaired);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("half.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("half.bin"));
        Assert.Equal(content, await _rig.ReadAsync("half.bin"));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_recall_cut_short_before_the_index_heard_of_it_leaves_a_clean_stub_and_no_conflict_copy(bool indexKeptTheStub)
    {
        var content = await StubbedAsync("cut.bin", seed: 3);
        // The crash, as a recall leaves it before its Recalling state reaches the index: the stub marked Recalling (what
        // the recall does before its first byte) and half the bytes in; the index still says Stubbed, or was lost.
        var mark = StubMark.Read(_rig.Local("cut.bin"))!;
        StubMark.Write(_rig.CachePath, _rig.Local("cut.bin"), mark with { Recalling = true });
        using (var f = new FileStream(_rig.Local("cut.bin"), FileMode.Open, FileAccess.Write))
        {
            f.Write(content, 0, 4096);
        }
        if (!indexKeptTheStub)
        {
            _rig.Index.Delete("cut.bin");
        }

        var report = await _rig.RestartAsync();

        Assert.Equal(0, report.ChangedFound);
        Assert.Equal(["cut.bin"], CacheFiles());
        Assert.Equal(FileState.Stubbed, _rig.StateOf("cut.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("cut.bin"));
        Assert.False(StubMark.Read(_rig.Local("cut.bin"))!.Recalling);
        Assert.Equal(content, await _rig.ReadAsync("cut.bin"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_recall_finished_on_disk_whose_Cached_state_was_lost_is_kept_only_when_its_bytes_have_the_recorded_hash(bool changed)
    {
        var content = await StubbedAsync("done.bin", seed: 4);
        await _rig.Engine.RecallAsync("done.bin");
        // The crash (a power cut): the recall's bytes were fsynced and its mark removed, but its Cached state, written
        // without waiting for the disk, was lost, so the index says Stubbed.
        var entry = _rig.Index.Get("done.bin")!;
        entry.State = FileState.Stubbed;
        _rig.Index.Put(entry);
        if (changed)
        {
            // Not the recall's bytes (however they got there): never taken for the object's.
            using (var f = new FileStream(_rig.Local("done.bin"), FileMode.Open, FileAccess.Write))
            {
                f.Write([(byte)(content[0] ^ 0xff)]);
            }
            File.SetLastWriteTimeUtc(_rig.Local("done.bin"), entry.ModifiedUtc.UtcDateTime);
        }

        var report = await _rig.RestartAsync();

        Assert.Equal(changed ? 0 : 1, report.RecallsKept);
        Assert.Equal(changed ? FileState.Stubbed : FileState.Cached, _rig.StateOf("done.bin"));
        Assert.Equal(changed, StubMark.Read(_rig.Local("done.bin")) is not null);
        Assert.Equal(["done.bin"], CacheFiles());
        Assert.Equal(content, await _rig.ReadAsync("done.bin"));
    }

    /// <summary>A file of 8 KB written, uploaded and stubbed; returns its bytes.</summary>
    private Task<byte[]> StubbedAsync(string path, int seed) => _rig.StubbedAsync(path, 8192, seed);

    private List<string> CacheFiles() =>
        [.. Directory.EnumerateFiles(_rig.CachePath, "*", SearchOption.AllDirectories)
            .Select(f => Path.GetRelativePath(_rig.CachePath, f))
            .Where(f => !f.StartsWith(".geodrive", StringComparison.Ordinal))];

    [Fact]
    public async Task Files_written_while_nobody_watched_are_found_and_uploaded()
    {
        await _rig.WriteAsync("known.txt", "v1"u8.ToArray());
        await _rig.Engine.UploadAsync("known.txt");
        // Written after the last close was seen (a crash mid-write), and a file never reported at all.
        await File.WriteAllBytesAsync(_rig.Local("known.txt"), "v2 longer"u8.ToArray());
        Directory.CreateDirectory(_rig.Local("new"));
        await File.WriteAllBytesAsync(_rig.Local("new/unseen.txt"), "unseen"u8.ToArray());

        var report = await _rig.RestartAsync();

        Assert.Equal(1, report.ChangedFound);
        Assert.Equal(1, report.NewFound);
        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await _rig.Engine.TickAsync();
        Assert.Equal("v2 longer"u8.ToArray(), await _rig.ObjectBytesAsync("known.txt"));
        Assert.Equal("unseen"u8.ToArray(), await _rig.ObjectBytesAsync("new/unseen.txt"));
    }

    [Fact]
    public async Task The_engines_own_folder_is_never_uploaded()
    {
        await _rig.RestartAsync();
        _rig.Clock.Advance(TimeSpan.FromDays(1));
        await _rig.Engine.TickAsync();

        Assert.DoesNotContain(_rig.Index.All(), e => e.Path.StartsWith(".geodrive", StringComparison.Ordinal));
        await foreach (var o in _rig.Store.ListAsync(""))
        {
            Assert.DoesNotContain(".geodrive", o.Key, StringComparison.Ordinal);
        }
    }
}
