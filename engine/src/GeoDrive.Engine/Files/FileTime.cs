using System.Globalization;

namespace GeoDrive.Engine.Files;

/// <summary>
/// A file's time to the nanosecond, as stat(2) shows it. .NET's <see cref="DateTimeOffset"/> holds 100 ns ticks,
/// which is what the index records; the cache file and the bucket (geodrive-mtime-ns) keep the whole time.
/// </summary>
public readonly record struct FileTime(long Seconds, long Nanoseconds)
{
    private const long TicksPerSecond = TimeSpan.TicksPerSecond;

    public static FileTime From(DateTimeOffset time)
    {
        var ticks = time.UtcTicks - DateTimeOffset.UnixEpoch.UtcTicks;
        var seconds = Math.DivRem(ticks, TicksPerSecond, out var rest);
        if (rest < 0)
        {
            seconds--;
            rest += TicksPerSecond;
        }
        return new FileTime(seconds, rest * 100);
    }

    /// <summary>The time in ticks, the nanoseconds below 100 cut (as .NET reads a file's time).</summary>
    public DateTimeOffset ToDateTimeOffset() =>
        new(DateTimeOffset.UnixEpoch.UtcTicks + Seconds * TicksPerSecond + Nanoseconds / 100, TimeSpan.Zero);

    /// <summary>True when this is <paramref name="time"/> to the tick: the same time, known more exactly.</summary>
    public bool Refines(DateTimeOffset time) => ToDateTimeOffset() == time;

    /// <summary>The exact time when it refines <paramref name="time"/>, else <paramref name="time"/> itself.</summary>
    public static FileTime Exact(DateTimeOffset time, FileTime? known) => known is { } exact && exact.Refines(time) ? exact : From(time);

    /// <summary>"seconds.nanoseconds" since the Unix epoch, nine digits after the point (geodrive-mtime-ns).</summary>
    public override string ToString() =>
        Seconds.ToString(CultureInfo.InvariantCulture) + "." + Nanoseconds.ToString("D9", CultureInfo.InvariantCulture);

    public static FileTime? Parse(string? text)
    {
        if (text is null || text.Split('.') is not [var seconds, { Length: 9 } nanoseconds]
            || !long.TryParse(seconds, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var s)
            || !long.TryParse(nanoseconds, NumberStyles.None, CultureInfo.InvariantCulture, out var ns))
        {
            return null;
        }
        return new FileTime(s, ns);
    }
}
