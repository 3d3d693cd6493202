using System.Globalization;
using GeoDrive.Core.Model;

namespace GeoDrive.Policies.Model;

/// <summary>A cache threshold: a percentage of the cache volume ("85%") or an absolute size ("500GiB").</summary>
public readonly record struct CacheLevel
{
    private CacheLevel(double? percent, long bytes)
    {
        Percent = percent;
        Bytes = bytes;
    }

    /// <summary>The percentage (0..100) when written as one, else null.</summary>
    public double? Percent { get; }

    /// <summary>The size in bytes when written as one (0 when a percentage).</summary>
    public long Bytes { get; }

    public bool IsPercent => Percent.HasValue;

    public static CacheLevel OfPercent(double percent) => new(percent, 0);

    public static CacheLevel OfBytes(long bytes) => new(null, bytes);

    /// <summary>The level in bytes for a cache volume of the given size.</summary>
    public long ToBytes(long volumeBytes) => Percent is { } p ? (long)Math.Round(volumeBytes * p / 100.0) : Bytes;

    public override string ToString() =>
        Percent is { } p ? p.ToString("0.##", CultureInfo.InvariantCulture) + "%" : ByteSize.Format(Bytes);
}
