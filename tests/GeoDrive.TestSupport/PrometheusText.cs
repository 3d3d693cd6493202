using System.Globalization;
using System.Text.RegularExpressions;

namespace GeoDrive.TestSupport;

/// <summary>One sample of a Prometheus text exposition: a series name, its labels and its value.</summary>
public sealed record PrometheusSample(string Name, IReadOnlyDictionary<string, string> Labels, double Value)
{
    /// <summary>As the exposition writes it.</summary>
    public override string ToString() =>
        $"{Name}{{{string.Join(",", Labels.Select(l => $"{l.Key}=\"{l.Value}\""))}}} {Value.ToString(CultureInfo.InvariantCulture)}";
}

/// <summary>Reads the Prometheus text format (version 0.0.4) as a scraper does: comment lines skipped, one sample a line.</summary>
public static partial class PrometheusText
{
    public static IReadOnlyList<PrometheusSample> Parse(string text)
    {
        var samples = new List<PrometheusSample>();
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.Trim();
            if (line.Length == 0 || line.StartsWith('#'))
            {
                continue;
            }
            var match = SampleLine().Match(line);
            if (!match.Success)
            {
                throw new FormatException($"not a Prometheus sample line: {line}");
            }
            var labels = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (Match label in Label().Matches(match.Groups["labels"].Value))
            {
                labels[label.Groups[1].Value] = label.Groups[2].Value.Replace("\\\"", "\"", StringComparison.Ordinal).Replace("\\\\", "\\", StringComparison.Ordinal);
            }
            samples.Add(new PrometheusSample(match.Groups["name"].Value, labels, Value(match.Groups["value"].Value)));
        }
        return samples;
    }

    private static double Value(string text) => text switch
    {
        "+Inf" => double.PositiveInfinity,
        "-Inf" => double.NegativeInfinity,
        "NaN" => double.NaN,
        _ => double.Parse(text, NumberStyles.Float, CultureInfo.InvariantCulture),
    };

    [GeneratedRegex("""^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?<labels>.*)\})?\s+(?<value>\S+)(\s+-?\d+)?$""")]
    private static partial Regex SampleLine();

    [GeneratedRegex(@"([a-zA-Z_][a-zA-Z0-9_]*)=""((?:[^""\\]|\\.)*)""")]
    private static partial Regex Label();
}
