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
}
