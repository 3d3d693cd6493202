using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Streaming recall through a real mount, on Ceph: an application opening a large stub gets its first
/// bytes while the rest of the file is still on its way; the file is Cached once every range is back
/// and verified. The download is throttled so "still on its way" lasts long enough to be seen.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class StreamingRecallMountTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>, IAsyncLifetime
{
    private const int Part = 5 << 20;

    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: streaming-recall }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
          throttle: { download: 4MB/s }
          transfer: { multipart: { threshold: 5MiB, partSize: 5MiB, restoreThreads: 2 } }
        """;

    private readonly DriveRig _rig = new(ceph, Policy);
    private readonly TempDirectory _mountFolder = new("mnt");
    private FuseMountedDrive _mounted = null!;

    public async Task InitializeAsync()
    {
        await _rig.Engine.StartAsync();
        _mounted = new FuseMountedDrive(_rig.Engine, _mountFolder.Path);
    }

    public async Task DisposeAsync()
    {
        await _mounted.DisposeAsync();
        await _rig.Engine.StopRecallsAsync();
        await _rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted.Root, path);

    [Fact]
    public async Task Reading_the_first_megabyte_of_a_large_stub_returns_while_the_file_is_still_recalling()
    {
        var content = DriveRig.RandomBytes(3 * Part + 1, seed: 3);
        await _rig.WriteAsync("movie.bin", content);
        await _rig.Engine.UploadAsync("movie.bin");
        await _rig.Engine.StubAsync("movie.bin");

        var first = new byte[1 << 20];
        FileState stateAfterFirstRead;
        long presentAfterFirstRead;
        await using (var file = new FileStream(Mounted("movie.bin"), FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.None))
        {
            await file.ReadExactlyAsync(first);
            stateAfterFirstRead = _rig.StateOf("movie.bin");
            presentAfterFirstRead = _rig.Engine.RecallProgress("movie.bin")?.Present ?? content.Length;

            var rest = new byte[content.Length - first.Length];
            await file.ReadExactlyAsync(rest);
            Assert.Equal(content.AsSpan(first.Length).ToArray(), rest);
        }

        Assert.Equal(content.AsSpan(0, first.Length).ToArray(), first);
        Assert.Equal(FileState.Recalling, stateAfterFirstRead);
        Assert.True(presentAfterFirstRead < content.Length, $"{presentAfterFirstRead} of {content.Length} bytes were back at the first read");
        await _mounted.WaitForClosesAsync();
        Assert.Equal(FileState.Cached, (await _rig.Engine.RecallAsync("movie.bin")).State);
        Assert.Equal(content, await File.ReadAllBytesAsync(Mounted("movie.bin")));
    }

    [Fact]
    public async Task A_small_stub_is_still_recalled_whole_before_the_open_returns()
    {
        var content = DriveRig.RandomBytes(100_000, seed: 4);
        await _rig.WriteAsync("note.bin", content);
        await _rig.Engine.UploadAsync("note.bin");
        await _rig.Engine.StubAsync("note.bin");

        Assert.Equal(content, await File.ReadAllBytesAsync(Mounted("note.bin")));
        Assert.Equal(FileState.Cached, _rig.StateOf("note.bin"));
    }
}
