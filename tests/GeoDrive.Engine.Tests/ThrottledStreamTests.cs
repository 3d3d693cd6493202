using System.Diagnostics;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

public sealed class ThrottledStreamTests
{
    [Fact]
    public async Task Reading_through_a_throttle_holds_the_rate_within_10_percent()
    {
        using var source = new MemoryStream(new byte[20_000_000]);
        await using var throttled = new ThrottledStream(source, new Throttle(() => 10_000_000));
        var buffer = new byte[1 << 20];
        var clock = Stopwatch.StartNew();

        long total = 0;
        int n;
        while ((n = await throttled.ReadAsync(buffer)) > 0)
        {
            total += n;
        }

        var rate = total / clock.Elapsed.TotalSeconds;
        Assert.Equal(20_000_000, total);
        Assert.InRange(rate, 9_000_000, 11_000_000);
    }

    [Fact]
    public async Task Each_wait_the_throttle_imposes_is_told_and_together_they_come_to_the_bytes_over_the_rate()
    {
        var waits = new List<TimeSpan>();
        var throttle = new Throttle(() => 1_000_000, wait => waits.Add(wait));

        // Ten 50 KB slices at 1 MB/s from an empty bucket: half a second, told wait by wait. A late wake-up (a loaded
        // machine) fills the bucket meanwhile, so later slices wait less or not at all: never more than the half second.
        for (var i = 0; i < 10; i++)
        {
            await throttle.TakeAsync(50_000, CancellationToken.None);
        }

        Assert.InRange(waits.Count, 1, 10);
        Assert.InRange(waits.Sum(w => w.TotalSeconds), 0.04, 0.5);
    }

    [Fact]
    public async Task An_unlimited_throttle_tells_no_wait()
    {
        var waits = 0;
        var throttle = new Throttle(() => 0, _ => waits++);

        await throttle.TakeAsync(10_000_000, CancellationToken.None);

        Assert.Equal(0, waits);
    }
}
