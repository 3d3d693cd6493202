using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The throttle's arithmetic on a clock the test owns: each wait the throttle asks for moves the clock on by that
/// wait (plus a chosen lateness, a loaded machine's late wake-up), so the rate is measured without a real second
/// passing and cannot depend on how busy the machine is. The rate on the wire is ThrottleTests', run alone.
/// </summary>
public sealed class ThrottledStreamTests
{
    [Fact]
    public async Task Reading_20_MB_through_a_10_MB_per_second_throttle_takes_two_seconds_of_its_clock()
    {
        var clock = new JumpingClock(lateness: TimeSpan.Zero);

        var (total, seconds) = await ReadThroughAsync(new Throttle(() => 10_000_000, time: clock), clock, 20_000_000);

        Assert.Equal(20_000_000, total);
        // The bucket starts empty, so every byte waits its turn: 2 s, give or take one 64 KB slice (6.6 ms).
        Assert.InRange(seconds, 1.99, 2.01);
    }

    [Fact]
    public async Task Late_wake_ups_are_made_up_so_the_rate_still_holds()
    {
        // Every wait ends 50 ms late. A limiter that only slept each slice's share would take 305 × (6.6 + 50) ms ≈ 17 s;
        // the bucket gathers what the late wake-up missed, and the 20 MB still take 2 s and at most one lateness more.
        var clock = new JumpingClock(lateness: TimeSpan.FromMilliseconds(50));

        var (total, seconds) = await ReadThroughAsync(new Throttle(() => 10_000_000, time: clock), clock, 20_000_000);

        Assert.Equal(20_000_000, total);
        Assert.InRange(seconds, 1.99, 2.06);
    }

    [Fact]
    public async Task Each_wait_the_throttle_imposes_is_told_and_together_they_come_to_the_bytes_over_the_rate()
    {
        var waits = new List<TimeSpan>();
        var clock = new JumpingClock(lateness: TimeSpan.Zero);
        var throttle = new Throttle(() => 1_000_000, wait => waits.Add(wait), clock);

        // Ten 50 KB slices at 1 MB/s from an empty bucket: each waits 50 ms, told wait by wait.
        for (var i = 0; i < 10; i++)
        {
            await throttle.TakeAsync(50_000, CancellationToken.None);
        }

        Assert.Equal(10, waits.Count);
        Assert.Equal(0.5, waits.Sum(w => w.TotalSeconds), precision: 6);
        Assert.Equal(0.5, clock.Elapsed.TotalSeconds, precision: 6);
    }

    [Fact]
    public async Task An_unlimited_throttle_tells_no_wait()
    {
        var waits = 0;
        var throttle = new Throttle(() => 0, _ => waits++);

        await throttle.TakeAsync(10_000_000, CancellationToken.None);

        Assert.Equal(0, waits);
    }

    private static async Task<(long Total, double Seconds)> ReadThroughAsync(Throttle throttle, JumpingClock clock, int size)
    {
        using var source = new MemoryStream(new byte[size]);
        await using var throttled = new ThrottledStream(source, throttle);
        var buffer = new byte[1 << 20];
        var start = clock.Elapsed;
        long total = 0;
        int n;
        while ((n = await throttled.ReadAsync(buffer)) > 0)
        {
            total += n;
        }
        return (total, (clock.Elapsed - start).TotalSeconds);
    }

    /// <summary>
    /// A clock that stands still until something waits on it, then jumps to the end of that wait (and
    /// <paramref name="lateness"/> beyond) and ends it at once: time passes only as the throttle asks.
    /// </summary>
    private sealed class JumpingClock(TimeSpan lateness) : TimeProvider
    {
        private long _ticks;

        public TimeSpan Elapsed => TimeSpan.FromTicks(Interlocked.Read(ref _ticks));

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => Interlocked.Read(ref _ticks);

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            Interlocked.Add(ref _ticks, (dueTime + lateness).Ticks);
            ThreadPool.QueueUserWorkItem(_ => callback(state));
            return new Fired();
        }

        private sealed class Fired : ITimer
        {
            public bool Change(TimeSpan dueTime, TimeSpan period) => false;

            public void Dispose()
            {
            }

            public ValueTask DisposeAsync() => ValueTask.CompletedTask;
        }
    }
}
