using System.Diagnostics;
using System.Globalization;
using System.Text;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

// Policy decisions per second on one core (issue 3, "Speed"): 1 M generated drive paths, each asked
// what the stubbing scan asks (excluded? pinned? access wait?: PolicyEvaluator.StubbingFor, one
// decision), against policies of 10 and 100 rules.
// Patterns are compiled once, when the policy is loaded; the timed loop only evaluates.
//   dotnet run -c Release --project tests/bench/policy [-- --paths 1000000 --rules 10,100]

var paths = 1_000_000;
int[] ruleCounts = [10, 100];
for (var i = 0; i < args.Length - 1; i++)
{
    if (args[i] == "--paths")
    {
        paths = int.Parse(args[i + 1], CultureInfo.InvariantCulture);
    }
    else if (args[i] == "--rules")
    {
        ruleCounts = [.. args[i + 1].Split(',').Select(r => int.Parse(r, CultureInfo.InvariantCulture))];
    }
}

if (OperatingSystem.IsLinux() || OperatingSystem.IsWindows())
{
    Process.GetCurrentProcess().ProcessorAffinity = 1; // one core
}
var generated = Workload.Paths(paths, seed: 7);
Console.WriteLine($"| rules | paths | decisions/s | ns/decision | excluded | pinned |");
Console.WriteLine($"|---:|---:|---:|---:|---:|---:|");
foreach (var rules in ruleCounts)
{
    var evaluator = new PolicyEvaluator(EffectivePolicy.Merge([PolicyLoader.Parse(Workload.Policy(rules), $"bench-{rules}.yaml")]));
    Run(evaluator, generated.AsSpan(0, Math.Min(generated.Length, 100_000))); // warm-up: JIT tiers, regex caches
    var best = double.MaxValue;
    (int Excluded, int Pinned) counts = default;
    for (var round = 0; round < 3; round++)
    {
        var clock = Stopwatch.StartNew();
        counts = Run(evaluator, generated);
        best = Math.Min(best, clock.Elapsed.TotalSeconds);
    }
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"| {rules} | {paths:N0} | {paths / best:N0} | {best * 1e9 / paths:N0} | {counts.Excluded:N0} | {counts.Pinned:N0} |"));
}

static (int Excluded, int Pinned) Run(PolicyEvaluator evaluator, ReadOnlySpan<string> paths)
{
    int excluded = 0, pinned = 0;
    long waits = 0;
    foreach (var path in paths)
    {
        var decision = evaluator.StubbingFor(path);
        excluded += decision.Excluded ? 1 : 0;
        pinned += decision.Pinned ? 1 : 0;
        waits += decision.AccessWait.Ticks;
    }
    GC.KeepAlive(waits);
    return (excluded, pinned);
}

/// <summary>A share's paths and a policy of the usual shapes of rules, both made from a fixed seed.</summary>
internal static class Workload
{
    private static readonly string[] Folders =
        ["Active", "Archive", "Projects", "Reports", "Scans", "Media", "Legal", "Finance", "HR", "Build", "2019", "2020", "2021",
         "2022", "2023", "2024", "Q1", "Q2", "Q3", "Q4", "Current", "Old", "Clients", "Contracts", "Invoices", "Photos", "Video"];

    private static readonly string[] Extensions =
        [".pdf", ".docx", ".xlsx", ".pptx", ".txt", ".jpg", ".png", ".tif", ".iso", ".zip", ".tmp", ".csv", ".mp4", ".bak", ".log"];

    public static string[] Paths(int count, int seed)
    {
        var random = new Random(seed);
        var paths = new string[count];
        var sb = new StringBuilder();
        for (var i = 0; i < count; i++)
        {
            sb.Clear();
            var depth = random.Next(1, 7);
            for (var d = 0; d < depth; d++)
            {
                sb.Append(Folders[random.Next(Folders.Length)]);
                if (random.Next(4) == 0)
                {
                    sb.Append('-').Append(random.Next(100));
                }
                sb.Append('/');
            }
            sb.Append("file").Append(random.Next(100_000)).Append(Extensions[random.Next(Extensions.Length)]);
            paths[i] = sb.ToString();
        }
        return paths;
    }

    /// <summary>
    /// <paramref name="rules"/> rules: a third excludes, the rest stubbing rules (pins and access waits),
    /// cycling through the pattern shapes administrators write: extensions at any depth, top-level
    /// folders, names anywhere, folders under a wildcard, classes and alternations.
    /// </summary>
    public static string Policy(int rules)
    {
        var excludes = new List<string>();
        var stubbing = new List<string>();
        for (var i = 0; i < rules; i++)
        {
            var folder = Folders[i % Folders.Length];
            var ext = Extensions[i % Extensions.Length];
            var pattern = (i % 8) switch
            {
                0 => $"*{ext}{(i < 16 ? "" : i.ToString(CultureInfo.InvariantCulture))}",
                1 => $"{folder}{(i < 27 ? "" : "-" + i.ToString(CultureInfo.InvariantCulture))}/",
                2 => $"**/*{ext}{(i < 24 ? "" : i.ToString(CultureInfo.InvariantCulture))}",
                3 => $"Thumbs{i}.db",
                4 => $"Projects/*/{folder}{i}/",
                5 => $"**/{folder}-{i % 100}/**",
                6 => $"Media/[0-9][0-9]{i}*/**",
                _ => $"{folder}/**/*.{{bak,old{i}}}",
            };
            if (i % 3 == 0)
            {
                excludes.Add($"\"{pattern}\"");
            }
            else
            {
                stubbing.Add(i % 2 == 0
                    ? $"      - {{ paths: [ \"{pattern}\" ], pin: true }}"
                    : $"      - {{ paths: [ \"{pattern}\" ], accessWait: {1 + i % 30}d }}");
            }
        }
        return $"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: {"{"} name: bench-{rules} {"}"}
            spec:
              stubbing:
                accessWait: 30d
                rules:
            {string.Join('\n', stubbing)}
              excludes: [ {string.Join(", ", excludes)} ]
            """;
    }
}
