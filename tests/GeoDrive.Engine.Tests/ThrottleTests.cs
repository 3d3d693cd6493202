using System.Diagnostics;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// spec.throttle against a real server. The rate is real time (a limiter waits); the schedule window is chosen on the injected clock.
/// Ceph RGW, not moto: on a loaded 2-core machine moto itself could not take 10 MB/s (6.9 MB/s measured), which failed the lower bound.
/// </summary>
// Measured on the wire: scripts/test.sh runs the "Rate" tests last, alone (beside the other assemblies
// on two cores they measured below their rates).
[Trait("Category", "Rate")]
public sealed class ThrottleTests(CephS3Fixture s3, ITestOutputHelper output) : IClassFixture<CephS3Fixture>
{
    private const int MB = 1_000_000;

    private static string Policy(string throttle) => $$"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: throttle-tests }
        spec:
          upload: { settle: 0s }
          throttle: {{throttle}}
        """;

    /// <summary>
    /// Uploads a file of random bytes in parts; returns the seconds the upload took and a check to run afterwards.
    /// The wire is measured from the multipart upload's start: the drive's first upload also probes how the server answers
    /// a PUT over a taken key, a few requests that on a slow day took 0.4 s and are not the transfer. (From the first part
    /// the limiter's credit, gained while the start waits for its answer, would count without that wait.)
    /// </summary>
    private async Task<(double Seconds, Func<Task> VerifyAsync)> UploadAsync(DriveRig rig, FaultProxy wire, string path, int size)
    {
        var content = DriveRig.RandomBytes(size, size);
        await rig.WriteAsync(path, content);
        // Until the completion: it goes once the server has answered the last part, a wait that is the server's.
        wire.ResetWireMeterFrom($"POST /{rig.Bucket}/{path}?uploads", $"POST /{rig.Bucket}/{path}?uploadId=");
        var clock = Stopwatch.StartNew();
        var entry = await rig.Engine.UploadAsync(path);
        var seconds = clock.Elapsed.TotalSeconds;
        output.WriteLine($"{path}: upload {seconds:0.000} s; {wire.BytesToServer} bytes on the wire in {wire.ToServerSpan.TotalSeconds:0.000} s = {wire.BytesToServer / 1e6 / wire.ToServerSpan.TotalSeconds:0.00} MB/s");
        Assert.Equal(FileState.Cached, entry.State);
        return (seconds, async () => Assert.Equal(content, await rig.ObjectBytesAsync(path)));
    }

    private static readonly SemaphoreSlim WarmUpGate = new(1, 1);
    private static bool _warm;

    /// <summary>
    /// Once per test process, a throttled multipart upload on a drive of its own (its own limiter), untimed: the first
    /// one in a process, on a server just started, is the slowest whatever the limiter does (without this, 8.50 MB/s under
    /// 10 MB/s on a Ceph just started, then 10.00 in the next run, 2026-11-29). The rate tests measure the limiter, not a
    /// cold process or server.
    /// </summary>
    private async Task WarmUpAsync()
    {
        await WarmUpGate.WaitAsync();
        try
        {
            if (_warm)
            {
                return;
            }
            await using var rig = new DriveRig(s3, Policy("{ upload: 100MB/s }"), multipartThreshold: 8L << 20);
            await rig.WriteAsync("warm-up.bin", DriveRig.RandomBytes(17 * MB, 17));
            Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("warm-up.bin")).State);
            _warm = true;
        }
        finally
        {
            WarmUpGate.Release();
        }
    }

    [Fact]
    public async Task A_50_MB_upload_throttled_to_10_MB_per_second_takes_at_least_4_5_s_at_no_more_than_10_percent_over_the_rate()
    {
        await WarmUpAsync();
        // The rate is measured on the wire, by a proxy in front of the server: hashing before and the
        // HEAD after are not the transfer.
        using var wire = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, Policy("{ upload: 10MB/s }"), multipartThreshold: 8L << 20, endpoint: wire.Endpoint);

        var (seconds, verifyAsync) = await UploadAsync(rig, wire, "big.bin", 50 * MB);
        var (bytes, span) = (wire.BytesToServer, wire.ToServerSpan);
        await verifyAsync();

        var rate = bytes / 1e6 / span.TotalSeconds;
        Assert.True(seconds >= 4.5, $"took {seconds:0.00} s");
        Assert.True(bytes >= 50 * MB, $"{bytes} bytes passed the proxy");
        // Over the rate is the throttle failing, under it a limiter that sends less than it may. CI measured 8.76 MB/s once
        // (2026-11-27) when parts were read whole through the limit and sent in a burst each (the last one's send, and the
        // upload's start, added to the span); paced as they are sent and measured from the first part, 9.93-10.08 here.
        // CI measured 8.54 MB/s (2026-11-29) with the span running to the completion, which waits for the server's answer
        // to the last part (here 8.40 in one run of two); measured to the last part's bytes, 9.98-9.99 in four runs.
        Assert.InRange(rate, 9.0, 11.0);
    }

    [Fact]
    public async Task Inside_a_schedule_window_the_window_s_rate_applies()
    {
        await WarmUpAsync();
        // The manual clock starts on Monday 2026-01-05 09:00 UTC; the window covers every day, all day, in any time zone.
        using var wire = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, Policy("""
            { upload: 100MB/s, schedule: [ { days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], from: "00:00", to: "23:59", upload: 2MB/s } ] }
            """), multipartThreshold: 8L << 20, endpoint: wire.Endpoint);

        var (seconds, verifyAsync) = await UploadAsync(rig, wire, "window.bin", 20 * MB);
        var (bytes, span) = (wire.BytesToServer, wire.ToServerSpan);
        await verifyAsync();

        Assert.True(seconds >= 9, $"20 MB at the window's 2 MB/s took {seconds:0.00} s");
        Assert.InRange(bytes / 1e6 / span.TotalSeconds, 1.8, 2.2);
    }
}
