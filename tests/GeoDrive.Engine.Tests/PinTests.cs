using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>Set-CloudFile -Pin/-Unpin at the engine: a pin means "keep local".</summary>
public sealed class PinTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        // accessWait 1h, settle 30s (DriveRig.DefaultPolicy).
        _rig = new DriveRig(s3);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private async Task<byte[]> CachedFileAsync(string path)
    {
        var content = DriveRig.RandomBytes(5000, seed: path.Length);
        await _rig.WriteAsync(path, content);
        Assert.Equal(FileState.Cached, (await _rig.Engine.UploadAsync(path)).State);
        return content;
    }

    [Fact]
    public async Task A_pinned_file_is_never_stubbed_by_the_access_wait_and_is_once_unpinned()
    {
        await CachedFileAsync("keep.bin");
        await CachedFileAsync("cold.bin");
        await _rig.Engine.SetPinnedAsync("keep.bin", pinned: true);

        _rig.Clock.Advance(TimeSpan.FromDays(30));
        await _rig.Engine.TickAsync();

        Assert.Equal(FileState.Cached, _rig.StateOf("keep.bin"));
        Assert.NotEqual(0, _rig.AllocatedBlocks("keep.bin"));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("cold.bin"));

        await _rig.Engine.SetPinnedAsync("keep.bin", pinned: false);
        await _rig.Engine.TickAsync();

        Assert.Equal(FileState.Stubbed, _rig.StateOf("keep.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("keep.bin"));
    }

    [Fact]
    public async Task Force_stub_refuses_a_pinned_file_unless_forced()
    {
        await CachedFileAsync("pinned.bin");
        await _rig.Engine.SetPinnedAsync("pinned.bin", pinned: true);

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.ForceStubAsync("pinned.bin", overridePin: false));

        Assert.Equal(ErrorIds.FilePinned, refused.ErrorId);
        Assert.Contains("Set-CloudFile -Unpin", refused.Remedy, StringComparison.Ordinal);
        Assert.Equal(FileState.Cached, _rig.StateOf("pinned.bin"));

        Assert.Equal(FileState.Stubbed, (await _rig.Engine.ForceStubAsync("pinned.bin", overridePin: true)).State);
        Assert.True(_rig.Engine.GetFile("pinned.bin")!.Pinned);
    }

    [Fact]
    public async Task Pinning_a_stub_recalls_it_and_records_a_Pin_event()
    {
        var content = await CachedFileAsync("stub.bin");
        await _rig.Engine.StubAsync("stub.bin");

        var entry = await _rig.Engine.SetPinnedAsync("stub.bin", pinned: true);

        Assert.Equal(FileState.Cached, entry.State);
        Assert.True(entry.Pinned);
        Assert.Equal(content, await File.ReadAllBytesAsync(_rig.Local("stub.bin")));
        var kinds = _rig.Engine.ReadEvents().Where(e => e.Path == "stub.bin").Select(e => e.Kind).ToList();
        Assert.Equal([DriveEventKind.Recall, DriveEventKind.Pin, DriveEventKind.Stub, DriveEventKind.Upload], kinds);
    }

    [Fact]
    public async Task A_file_pinned_by_a_policy_rule_is_refused_by_force_stub_too()
    {
        await using var rig = new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: pins }
            spec:
              stubbing: { enabled: true, accessWait: 1h, rules: [ { paths: ["Active/**"], pin: true } ] }
            """);
        await rig.Engine.StartAsync();
        await rig.WriteAsync("Active/a.bin", DriveRig.RandomBytes(100, 1));
        await rig.Engine.UploadAsync("Active/a.bin");

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.ForceStubAsync("Active/a.bin", overridePin: false));

        Assert.Equal(ErrorIds.FilePinned, refused.ErrorId);
        Assert.Contains("policy", refused.Message, StringComparison.Ordinal);
        Assert.True(rig.Engine.IsPinned(rig.Engine.GetFile("Active/a.bin")!));
    }
}
