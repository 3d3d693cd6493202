using GeoDrive.Core.Ports;

namespace GeoDrive.TestSupport;

/// <summary>A clock the test moves by hand, so that settle and access-wait are tested without sleeping.</summary>
public sealed class ManualClock(DateTimeOffset start) : IClock
{
    private long _ticks = start.UtcTicks;

    public ManualClock()
        : this(new DateTimeOffset(2026, 1, 5, 9, 0, 0, TimeSpan.Zero))
    {
    }

    public DateTimeOffset UtcNow => new(Interlocked.Read(ref _ticks), TimeSpan.Zero);

    public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
}
