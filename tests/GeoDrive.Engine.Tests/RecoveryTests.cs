using GeoDrive.Core.Model;
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
        var content = DriveRig.RandomBytes(8192, 2);
        await _rig.WriteAsync("half.bin", content);
        await _rig.Engine.UploadAsync("half.bin");
        await _rig.Engine.StubAsync("half.bin");
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
