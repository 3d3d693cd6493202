using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>The stub-making port: a front end (ProjFS dehydration) makes the stub, or refuses and nothing is lost.</summary>
public sealed class LocalStubsTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private sealed class RecordingStubs(bool refuse) : ILocalStubs
    {
        public List<(FileState State, string LocalPath)> Calls { get; } = [];

        public void MakeStub(FileEntry entry, string localPath)
        {
            Calls.Add((entry.State, localPath));
            if (refuse)
            {
                throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.ResourceUnavailable, "open", "close it");
            }
        }
    }

    [Fact]
    public async Task The_front_end_makes_the_stub_after_the_entry_is_recorded_stubbed()
    {
        await _rig.WriteAsync("a.bin", DriveRig.RandomBytes(5000, 1));
        await _rig.Engine.UploadAsync("a.bin");
        var stubs = new RecordingStubs(refuse: false);
        _rig.Engine.LocalStubs = stubs;

        await _rig.Engine.StubAsync("a.bin");

        Assert.Equal([(FileState.Stubbed, _rig.Local("a.bin"))], stubs.Calls);
        Assert.Equal(FileState.Stubbed, _rig.StateOf("a.bin"));
    }

    [Fact]
    public async Task A_refusal_by_the_front_end_leaves_the_file_cached_with_its_data()
    {
        var bytes = DriveRig.RandomBytes(5000, 2);
        await _rig.WriteAsync("b.bin", bytes);
        await _rig.Engine.UploadAsync("b.bin");
        _rig.Engine.LocalStubs = new RecordingStubs(refuse: true);

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.StubAsync("b.bin"));

        Assert.Equal(ErrorIds.FileBusy, refused.ErrorId);
        Assert.Equal(FileState.Cached, _rig.StateOf("b.bin"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(_rig.Local("b.bin")));
    }
}
