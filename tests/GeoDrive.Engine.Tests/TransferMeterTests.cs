using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

public sealed class TransferMeterTests
{
    [Fact]
    public void Rates_are_bytes_per_second_over_the_last_ten_seconds_and_in_flight_bytes_follow_transfers()
    {
        var clock = new ManualClock();
        var meter = new TransferMeter();
        meter.Snapshot(clock.UtcNow);

        meter.UploadStarted(4_000_000);
        clock.Advance(TimeSpan.FromSeconds(2));
        var during = meter.Snapshot(clock.UtcNow);
        meter.UploadEnded(4_000_000);
        meter.Uploaded(4_000_000);
        meter.RecallStarted(1_000);
        meter.RecallEnded(1_000);
        meter.Recalled(1_000);
        clock.Advance(TimeSpan.FromSeconds(2));
        var after = meter.Snapshot(clock.UtcNow);
        clock.Advance(TimeSpan.FromSeconds(30));
        var idle = meter.Snapshot(clock.UtcNow);

        Assert.Equal((4_000_000L, 0.0), (during.UploadingBytes, during.UploadBytesPerSecond));
        Assert.Equal((0L, 1L, 4_000_000L), (after.UploadingBytes, after.UploadedFiles, after.UploadedBytes));
        Assert.Equal(1_000_000.0, after.UploadBytesPerSecond);
        Assert.Equal(250.0, after.RecallBytesPerSecond);
        Assert.Equal((0.0, 0.0, 4_000_000L), (idle.UploadBytesPerSecond, idle.RecallBytesPerSecond, idle.UploadedBytes));
    }
}
