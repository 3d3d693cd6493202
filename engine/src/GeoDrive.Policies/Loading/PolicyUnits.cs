using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Loading;

/// <summary>
/// The units policies are written in: durations ("30s", "5m", "1h30m", "30d"), sizes ("64KiB", "10GB"),
/// rates ("100MB/s") and percentages ("85%"). Errors say what was expected, ready for a problem message.
/// </summary>
public static partial class PolicyUnits
{
    /// <summary>The longest duration accepted: a hundred years is "never" for every setting we have.</summary>
    public static readonly TimeSpan MaximumDuration = TimeSpan.FromDays(36_500);

    private static readonly (string Unit, long Factor)[] SizeUnits =
    [
        ("B", 1),
        ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
        ("KiB", 1L << 10), ("MiB", 1L << 20), ("GiB", 1L << 30), ("TiB", 1L << 40),
    ];

    public static bool TryParseDuration(string text, out TimeSpan duration, [NotNullWhen(false)] out string? error)
    {
        duration = TimeSpan.Zero;
        text = text.Trim();
        if (text == "0")
        {
            error = null;
            return true;
        }
        var match = DurationPattern().Match(text);
        if (!match.Success || text.Length == 0)
        {
            error = long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out _)
                ? $"'{text}' has no unit; write it as '{text}s', '{text}m', '{text}h' or '{text}d'"
                : text.Contains('.', StringComparison.Ordinal) && DecimalDurationPattern().IsMatch(text)
                    ? $"'{text}' is not a duration; use whole numbers (e.g. 90m instead of 1.5h)"
                    : $"'{text}' is not a duration; write a whole number followed by s, m, h or d (e.g. 30s, 5m, 1h30m, 30d)";
            return false;
        }
        decimal seconds = 0;
        foreach (var (group, factor) in new[] { ("d", 86_400m), ("h", 3_600m), ("m", 60m), ("s", 1m) })
        {
            if (match.Groups[group].Success)
            {
                seconds += decimal.Parse(match.Groups[group].Value, CultureInfo.InvariantCulture) * factor;
            }
        }
        if (seconds > (decimal)MaximumDuration.TotalSeconds)
        {
            error = $"'{text}' is longer than the longest duration allowed ({FormatDuration(MaximumDuration)})";
            return false;
        }
        duration = TimeSpan.FromSeconds((double)seconds);
        error = null;
        return true;
    }

    /// <summary>A size in bytes: a number (decimals allowed) and one of B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); "0" alone is allowed.</summary>
    public static bool TryParseSize(string text, out long bytes, [NotNullWhen(false)] out string? error)
    {
        bytes = 0;
        text = text.Trim();
        if (text == "0")
        {
            error = null;
            return true;
        }
        var match = SizePattern().Match(text);
        if (!match.Success)
        {
            error = long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out _)
                ? $"'{text}' has no unit; write it as '{text}B' for bytes, or with KB, MB, GB, KiB, MiB, GiB …"
                : $"'{text}' is not a size; write a number followed by B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. 64KiB";
            return false;
        }
        var unitText = match.Groups["unit"].Value;
        var unit = SizeUnits.FirstOrDefault(u => u.Unit.Equals(unitText, StringComparison.OrdinalIgnoreCase));
        if (unit.Unit is null)
        {
            var suggestion = KeySuggestion.Closest(unitText, SizeUnits.Select(u => u.Unit));
            error = $"'{text}' has an unknown unit '{unitText}'"
                + (suggestion is null ? "; use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB" : $"; did you mean '{suggestion}'?");
            return false;
        }
        var value = decimal.Parse(match.Groups["number"].Value, CultureInfo.InvariantCulture) * unit.Factor;
        if (value > long.MaxValue / 2)
        {
            error = $"'{text}' is too large";
            return false;
        }
        bytes = (long)Math.Round(value);
        error = null;
        return true;
    }

    /// <summary>A rate in bytes per second ("100MB/s", "1GiB/s"), or "unlimited" (returned as 0).</summary>
    public static bool TryParseRate(string text, out long bytesPerSecond, [NotNullWhen(false)] out string? error)
    {
        bytesPerSecond = 0;
        text = text.Trim();
        if (text.Equals("unlimited", StringComparison.OrdinalIgnoreCase))
        {
            error = null;
            return true;
        }
        if (!text.EndsWith("/s", StringComparison.Ordinal))
        {
            error = $"'{text}' is not a rate; write a size per second such as 100MB/s or 20MiB/s, or 'unlimited'";
            return false;
        }
        if (!TryParseSize(text[..^2], out bytesPerSecond, out error))
        {
            error = $"'{text}' is not a rate: {error}";
            return false;
        }
        if (bytesPerSecond == 0)
        {
            error = $"'{text}' would stop all transfers; a rate must be above 0 (write 'unlimited' to lift a limit)";
            return false;
        }
        return true;
    }

    /// <summary>"85%" (0 to 100) or an absolute size ("500GiB").</summary>
    public static bool TryParseLevel(string text, out CacheLevel level, [NotNullWhen(false)] out string? error, out bool outOfRange)
    {
        level = default;
        outOfRange = false;
        text = text.Trim();
        var percent = PercentPattern().Match(text);
        if (percent.Success)
        {
            var value = double.Parse(percent.Groups["number"].Value, CultureInfo.InvariantCulture);
            if (value > 100)
            {
                outOfRange = true;
                error = $"'{text}' is more than 100% of the cache volume";
                return false;
            }
            level = CacheLevel.OfPercent(value);
            error = null;
            return true;
        }
        if (TryParseSize(text, out var bytes, out _))
        {
            level = CacheLevel.OfBytes(bytes);
            error = null;
            return true;
        }
        error = $"'{text}' is neither a percentage of the cache volume (e.g. 85%) nor a size (e.g. 500GiB)";
        return false;
    }

    /// <summary>The shortest exact form: "1h30m", "30d", "0s".</summary>
    public static string FormatDuration(TimeSpan duration)
    {
        if (duration <= TimeSpan.Zero)
        {
            return "0s";
        }
        var sb = new StringBuilder();
        Append(sb, duration.Days, 'd');
        Append(sb, duration.Hours, 'h');
        Append(sb, duration.Minutes, 'm');
        Append(sb, duration.Seconds, 's');
        return sb.Length == 0 ? "0s" : sb.ToString();

        static void Append(StringBuilder sb, int value, char unit)
        {
            if (value != 0)
            {
                sb.Append(value.ToString(CultureInfo.InvariantCulture)).Append(unit);
            }
        }
    }

    /// <summary>A rate as written in policies: "20 MiB/s", or "unlimited" for 0.</summary>
    public static string FormatRate(long bytesPerSecond) =>
        bytesPerSecond == 0 ? "unlimited" : Core.Model.ByteSize.Format(bytesPerSecond) + "/s";

    // Units in the fixed order d, h, m, s, each at most once, so "1h30m" reads one way only.
    [GeneratedRegex(@"^(?:(?<d>\d{1,6})d)?(?:(?<h>\d{1,7})h)?(?:(?<m>\d{1,9})m)?(?:(?<s>\d{1,10})s)?$", RegexOptions.CultureInvariant)]
    private static partial Regex DurationPattern();

    [GeneratedRegex(@"^\d+\.\d+[smhd]$", RegexOptions.CultureInvariant)]
    private static partial Regex DecimalDurationPattern();

    [GeneratedRegex(@"^(?<number>\d{1,15}(?:\.\d{1,6})?)\s?(?<unit>[A-Za-z]+)$", RegexOptions.CultureInvariant)]
    private static partial Regex SizePattern();

    [GeneratedRegex(@"^(?<number>\d{1,3}(?:\.\d{1,3})?)\s?%$", RegexOptions.CultureInvariant)]
    private static partial Regex PercentPattern();
}
