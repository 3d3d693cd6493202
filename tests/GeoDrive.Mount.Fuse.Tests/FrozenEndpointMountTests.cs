using System.Diagnostics;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// An S3 endpoint that accepts connections and never answers (a hung gateway) must not freeze the
/// mount: reads of local data, listings and new files go on with the cache as it is, and only a
/// recall waits on the network, failing within a bound with EIO and an event saying why.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class FrozenEndpointMountTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    // Each operation must end well within the freeze, which lasts until the test thaws it.
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);

    // Small parts, so that a file of a few MiB is recalled while it is read (streaming), as large files are.
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: frozen-endpoint }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
          transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }
        """;

    private readonly FaultProxy _proxy = new(s3.Endpoint);
    private readonly TempDirectory _mountFolder = new("mnt");
    private DriveRig _rig = null!;
    private FuseMountedDrive _mounted = null!;

    public async Task InitializeAsync()
    {
        _rig = new DriveRig(s3, Policy, endpoint: _proxy.Endpoint);
        await _rig.Engine.StartAsync();
        _mounted = new FuseMountedDrive(_rig.Engine, _mountFolder.Path);
    }

    public async Task DisposeAsync()
    {
        _proxy.Thaw();
        await _mounted.DisposeAsync();
        await _rig.Engine.StopRecallsAsync();
        await _rig.DisposeAsync();
        _proxy.Dispose();
        _mountFolder.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted.Root, path);

    [Fact]
    public async Task A_frozen_endpoint_leaves_reads_listings_and_new_files_working_and_fails_a_recall_within_a_bound()
    {
        var stubBytes = DriveRig.RandomBytes(200_000, seed: 11);
        var largeStubBytes = DriveRig.RandomBytes((10 << 20) + 1, seed: 12);
        await File.WriteAllTextAsync(Mounted("cached.txt"), "local bytes");
        await File.WriteAllBytesAsync(Mounted("stub.bin"), stubBytes);
        await File.WriteAllBytesAsync(Mounted("large.bin"), largeStubBytes);
        await _mounted.WaitForClosesAsync();
        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        await _rig.Engine.TickAsync();
        await _rig.Engine.StubAsync("stub.bin");
        await _rig.Engine.StubAsync("large.bin");
        Assert.Equal((FileState.Cached, FileState.Stubbed), (_rig.StateOf("cached.txt"), _rig.StateOf("stub.bin")));
        // Past updateWait: every user path below would ask the bucket first.
        _rig.Clock.Advance(TimeSpan.FromMinutes(10));

        _proxy.Freeze();

        var read = Run(Bound, "cat", Mounted("cached.txt"));
        Assert.True(read.Elapsed < Bound, $"reading a Cached file took {read.Elapsed.TotalSeconds:F1} s against a frozen endpoint");
        Assert.Equal((0, "local bytes"), (read.ExitCode, read.Output));

        var create = Run(Bound, "bash", "-c", "echo fresh > \"$1\"", "bash", Mounted("new.txt"));
        Assert.True(create.Elapsed < Bound, $"creating, writing and closing a new file took {create.Elapsed.TotalSeconds:F1} s against a frozen endpoint");
        Assert.Equal(0, create.ExitCode);

        var list = Run(Bound, "ls", _mounted.Root);
        Assert.True(list.Elapsed < Bound, $"listing the drive's root took {list.Elapsed.TotalSeconds:F1} s against a frozen endpoint");
        // The read found the bucket silent: later checks are skipped, not each given the whole deadline (5 s) again.
        Assert.True(create.Elapsed + list.Elapsed < TimeSpan.FromSeconds(3), $"the create and the listing waited {(create.Elapsed + list.Elapsed).TotalSeconds:F1} s for a bucket known silent");
        Assert.Equal(["cached.txt", "large.bin", "new.txt", "stub.bin"], list.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries));

        // A recall is the one thing that must wait for the network: it fails, within a bound, with EIO.
        // A small stub is recalled in the open, a large one while it is read (streaming recall): both ways.
        foreach (var stub in new[] { "stub.bin", "large.bin" })
        {
            // About one idle timeout of the store (20 s) and the retries' short backoffs.
            var recall = Run(TimeSpan.FromSeconds(60), "cat", Mounted(stub));
            Assert.True(recall.Elapsed < TimeSpan.FromSeconds(40), $"a recall of {stub} against a frozen endpoint took {recall.Elapsed.TotalSeconds:F1} s to fail");
            Assert.NotEqual(0, recall.ExitCode);
            Assert.Contains("Input/output error", recall.Errors, StringComparison.Ordinal);
            // A streaming recall's outcome is recorded by its runner as the read fails: awaited, not assumed.
            await EventuallyAsync(() => Task.FromResult(_rig.Engine.ReadEvents(kind: DriveEventKind.Error).Any(e => e.Path == stub && e.ErrorId == ErrorIds.EndpointUnreachable)),
                () => $"an EndpointUnreachable event for the recall of {stub}");
            Assert.Equal(FileState.Stubbed, _rig.StateOf(stub));
        }
        // The user paths said that the bucket did not answer, rather than nothing at all.
        Assert.Contains(_rig.Engine.ReadEvents(), e => e.ErrorId == ErrorIds.EndpointUnreachable && e.Path != "stub.bin");

        _proxy.Thaw();

        // Once it answers again: the new file goes up (retried after its backoff on the engine's clock;
        // the store asks the endpoint again one idle timeout after its last silence), and the stubs come back.
        await EventuallyAsync(async () =>
        {
            _rig.Clock.Advance(TimeSpan.FromMinutes(5));
            await _rig.Engine.TickAsync();
            // Uploaded; with the clock moved this far, maybe stubbed since (accessWait 1h).
            return _rig.StateOf("new.txt") is FileState.Cached or FileState.Stubbed;
        }, () => $"new.txt uploaded after the thaw (it is {_rig.StateOf("new.txt")}: {_rig.Engine.GetFile("new.txt")?.LastError})");
        Assert.Equal("fresh\n"u8.ToArray(), await _rig.ObjectBytesAsync("new.txt"));
        Assert.Equal(stubBytes, await File.ReadAllBytesAsync(Mounted("stub.bin")));
        Assert.Equal(largeStubBytes, await File.ReadAllBytesAsync(Mounted("large.bin")));
    }

    /// <summary>Retries a condition until true or a bounded deadline; each try may wait a store's backoff out.</summary>
    private static async Task EventuallyAsync(Func<Task<bool>> condition, Func<string> what)
    {
        var deadline = Stopwatch.StartNew();
        while (!await condition())
        {
            Assert.True(deadline.Elapsed < TimeSpan.FromSeconds(60), $"{what()}: not within 60 s");
            await Task.Delay(200);
        }
    }

    /// <summary>Runs a command, killed when it outlives <paramref name="limit"/> (a FUSE request waiting in the kernel is killable).</summary>
    private static (int ExitCode, TimeSpan Elapsed, string Output, string Errors) Run(TimeSpan limit, string file, params string[] arguments)
    {
        var watch = Stopwatch.StartNew();
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true })!;
        var output = process.StandardOutput.ReadToEndAsync();
        var errors = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(limit))
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
        }
        process.WaitForExit();
        return (process.ExitCode, watch.Elapsed, output.Result, errors.Result);
    }
}
