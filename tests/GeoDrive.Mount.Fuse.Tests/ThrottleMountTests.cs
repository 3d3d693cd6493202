using System.Diagnostics;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// spec.throttle on files written through a real FUSE mount, on Ceph (moto could not take 10 MB/s on a
/// loaded 2-core machine). Upload mode is sync, so close(2) returns once the object is in the bucket:
/// the application's write is the transfer. The rate is measured on the wire by a proxy in front of the server.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class ThrottleMountTests(CephS3Fixture ceph, ITestOutputHelper output) : IClassFixture<CephS3Fixture>, IAsyncLifetime
{
    private const int MB = 1_000_000;
    private readonly TempDirectory _mountFolder = new("mnt");
    // Undone last-in first-out: the mount before its engine, the engine before the proxy it talks through.
    private readonly Stack<object> _cleanup = new();

    private (DriveRig Rig, FaultProxy Wire, FuseMountedDrive Mounted) Mount(string throttle, long multipartThreshold)
    {
        var wire = new FaultProxy(ceph.Endpoint);
        _cleanup.Push(wire);
        var rig = new DriveRig(ceph, $$"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: throttle-mount-tests }
            spec:
              upload: { mode: sync, settle: 0s }
              throttle: {{throttle}}
            """, multipartThreshold: multipartThreshold, endpoint: wire.Endpoint);
        _cleanup.Push(rig);
        var mounted = new FuseMountedDrive(rig.Engine, _mountFolder.Path);
        _cleanup.Push(mounted);
        return (rig, wire, mounted);
    }

    /// <summary>What one write through the mount took: seconds until close returned, and the upload as the proxy saw it.</summary>
    private sealed record Upload(byte[] Content, double Seconds, long WireBytes, double WireSeconds)
    {
        public double Rate => WireBytes / 1e6 / WireSeconds;
    }

    /// <summary>
    /// Writes a file through the mount (sync: its close uploads it). The rate is also written to the
    /// test's output: the machine is shared, and a rate is worth seeing when it passes too.
    /// </summary>
    private Upload Write(FaultProxy wire, FuseMountedDrive mounted, string path, int size, int seed)
    {
        var content = DriveRig.RandomBytes(size, seed);
        var full = Path.Combine(mounted.Root, path);
        // Looking the new name up asks the bucket about it (HEAD, LIST; not again within updateWait):
        // done before the meter starts, so that the wire shows the upload alone.
        Assert.False(File.Exists(full));
        wire.ResetWireMeter();
        var clock = Stopwatch.StartNew();
        File.WriteAllBytes(full, content);
        var upload = new Upload(content, clock.Elapsed.TotalSeconds, wire.BytesToServer, wire.ToServerSpan.TotalSeconds);
        output.WriteLine($"{path}: write and close {upload.Seconds:0.000} s; {upload.WireBytes} bytes on the wire in {upload.WireSeconds:0.000} s = {upload.Rate:0.00} MB/s");
        return upload;
    }

    [Fact]
    public async Task Writing_50_MB_through_the_mount_throttled_to_10_MB_per_second_takes_at_least_4_5_s_at_a_rate_within_10_percent()
    {
        var (rig, wire, mounted) = Mount("{ upload: 10MB/s }", multipartThreshold: 8L << 20);

        var big = Write(wire, mounted, "big.bin", 50 * MB, 50);

        Assert.True(big.Seconds >= 4.5, $"the write took {big.Seconds:0.00} s");
        Assert.True(big.WireBytes >= 50 * MB, $"{big.WireBytes} bytes passed the proxy");
        Assert.InRange(big.Rate, 9.0, 11.0);
        Assert.Equal(FileState.Cached, rig.StateOf("big.bin"));
        Assert.Equal(big.Content, await rig.ObjectBytesAsync("big.bin"));
    }

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        while (_cleanup.TryPop(out var item))
        {
            switch (item)
            {
                case IAsyncDisposable asyncDisposable:
                    await asyncDisposable.DisposeAsync();
                    break;
                case IDisposable disposable:
                    disposable.Dispose();
                    break;
            }
        }
        _mountFolder.Dispose();
    }
}
