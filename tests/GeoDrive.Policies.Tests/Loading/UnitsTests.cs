using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests.Loading;

public sealed class UnitsTests
{
    public static TheoryData<string, long> Durations() => new()
    {
        { "0", 0 },
        { "0s", 0 },
        { "30s", 30 },
        { "5m", 300 },
        { "1h", 3600 },
        { "30d", 30 * 86400 },
        { "1h30m", 5400 },
        { "1d2h3m4s", 86400 + 7200 + 180 + 4 },
        { "90m", 5400 },
    };

    [Theory]
    [MemberData(nameof(Durations))]
    public void Durations_are_read_in_seconds_minutes_hours_and_days(string text, long seconds)
    {
        Assert.True(PolicyUnits.TryParseDuration(text, out var value, out var error), error);
        Assert.Equal(TimeSpan.FromSeconds(seconds), value);
    }

    [Theory]
    [InlineData("30x", "not a duration")]
    [InlineData("30", "has no unit; write it as '30s'")]
    [InlineData("1.5h", "90m instead of 1.5h")]
    [InlineData("30m1h", "not a duration")]
    [InlineData("1h1h", "not a duration")]
    [InlineData("-5s", "not a duration")]
    [InlineData("30 s", "not a duration")]
    [InlineData("", "not a duration")]
    [InlineData("36501d", "longer than")]
    [InlineData("1w", "not a duration")]
    public void Bad_durations_are_refused_with_a_hint(string text, string hint)
    {
        Assert.False(PolicyUnits.TryParseDuration(text, out _, out var error));
        Assert.Contains(hint, error, StringComparison.Ordinal);
    }

    public static TheoryData<string, long> Sizes() => new()
    {
        { "0", 0 },
        { "0B", 0 },
        { "512B", 512 },
        { "64KB", 64_000 },
        { "64KiB", 65_536 },
        { "10MB", 10_000_000 },
        { "10MiB", 10L << 20 },
        { "2GB", 2_000_000_000 },
        { "2GiB", 2L << 30 },
        { "1TB", 1_000_000_000_000 },
        { "1TiB", 1L << 40 },
        { "1.5MB", 1_500_000 },
        { "64 KiB", 65_536 },
        { "64kib", 65_536 },
    };

    [Theory]
    [MemberData(nameof(Sizes))]
    public void Sizes_are_read_in_powers_of_1000_and_1024(string text, long bytes)
    {
        Assert.True(PolicyUnits.TryParseSize(text, out var value, out var error), error);
        Assert.Equal(bytes, value);
    }

    [Theory]
    [InlineData("64XB", "unknown unit 'XB'")]
    [InlineData("64KIB ", null)]
    [InlineData("65536", "has no unit; write it as '65536B'")]
    [InlineData("64K", "did you mean")]
    [InlineData("lots", "not a size")]
    [InlineData("-1MB", "not a size")]
    public void Bad_sizes_are_refused_with_a_hint(string text, string? hint)
    {
        var ok = PolicyUnits.TryParseSize(text, out _, out var error);
        if (hint is null)
        {
            Assert.True(ok, error); // units are read case-insensitively and surrounding blanks are forgiven
            return;
        }
        Assert.False(ok);
        Assert.Contains(hint, error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("100MB/s", 100_000_000)]
    [InlineData("20MiB/s", 20L << 20)]
    [InlineData("unlimited", 0)]
    public void Rates_are_sizes_per_second(string text, long bytesPerSecond)
    {
        Assert.True(PolicyUnits.TryParseRate(text, out var value, out var error), error);
        Assert.Equal(bytesPerSecond, value);
    }

    [Theory]
    [InlineData("100MB", "not a rate")]
    [InlineData("0MB/s", "stop all transfers")]
    [InlineData("fastMB/s", "not a rate")]
    public void Bad_rates_are_refused(string text, string hint)
    {
        Assert.False(PolicyUnits.TryParseRate(text, out _, out var error));
        Assert.Contains(hint, error, StringComparison.Ordinal);
    }

    [Fact]
    public void Cache_levels_are_percentages_or_sizes()
    {
        Assert.True(PolicyUnits.TryParseLevel("85%", out var percent, out _, out _));
        Assert.Equal(85, percent.Percent);
        Assert.Equal(850, percent.ToBytes(1000));
        Assert.True(PolicyUnits.TryParseLevel("10GiB", out var size, out _, out _));
        Assert.Equal(CacheLevel.OfBytes(10L << 30), size);
        Assert.Equal(10L << 30, size.ToBytes(1));
        Assert.False(PolicyUnits.TryParseLevel("120%", out _, out _, out var outOfRange));
        Assert.True(outOfRange);
        Assert.False(PolicyUnits.TryParseLevel("lots", out _, out _, out outOfRange));
        Assert.False(outOfRange);
        Assert.Equal("85%", percent.ToString());
    }

    [Theory]
    [InlineData(0, "0s")]
    [InlineData(30, "30s")]
    [InlineData(5400, "1h30m")]
    [InlineData(2592000, "30d")]
    public void Durations_print_the_way_they_are_written(long seconds, string text) =>
        Assert.Equal(text, PolicyUnits.FormatDuration(TimeSpan.FromSeconds(seconds)));
}
