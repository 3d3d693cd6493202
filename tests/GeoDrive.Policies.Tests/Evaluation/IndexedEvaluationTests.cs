using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Globs;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests.Evaluation;

/// <summary>
/// The evaluator matches only the patterns its index says could apply (GlobIndex); its answers must be
/// exactly those of matching every pattern against the path and each folder it is in, in rule order.
/// </summary>
public sealed class IndexedEvaluationTests
{
    private static readonly string[] Shapes =
    [
        "*.tmp", "**/*.iso", "Active/**", "Scratch/", "**/Scratch/", "Thumbs.db", "Projects/*/Current/", "**/Old-3/**",
        "Media/[0-9][0-9]*/**", "Finance/**/*.{bak,old}", "*.TAR.gz", "~$*", "{a,b}*/x/", "**", "Reports/20[0-9][0-9]/*.pdf",
        "ÄRGER/**", "café.txt", "**/k*.log", "*", "Legal", "a/**/b/*.txt", "**/*.pdf/", ".git/",
    ];

    private static readonly string[] Names =
        ["Active", "active", "Scratch", "SCRATCH", "Projects", "p1", "Current", "Old-3", "Media", "2024", "Finance", "x", "a", "b", "Legal",
         "Reports", "ÄRGER", "ärger", "café.txt", "CAFÉ.TXT", ".git", "Thumbs.db", "thumbs.DB", "report.pdf", "a.tmp", "disk.ISO",
         "old.bak", "k1.log", "K2.LOG", "~$doc.docx", "arch.tar.gz", "plan.xlsx", "Kelvin-\u212A.log"];

    [Fact]
    public void Indexed_answers_equal_matching_every_rule_for_thousands_of_paths()
    {
        var random = new Random(3);
        for (var round = 0; round < 40; round++)
        {
            var evaluator = new PolicyEvaluator(EffectivePolicy.Merge([PolicyLoader.Parse(RandomPolicy(random, round), $"p{round}.yaml")]));
            for (var n = 0; n < 250; n++)
            {
                var path = string.Join('/', Enumerable.Range(0, random.Next(1, 6)).Select(_ => Names[random.Next(Names.Length)]));
                var expected = Naive(evaluator.Policy, path);

                Assert.Equal(expected, evaluator.StubbingFor(path));
                Assert.Equal(expected.Excluded, evaluator.IsExcluded(path, isDirectory: false));
                Assert.Equal(expected.Pinned, evaluator.Explain(path).Pinned.Value);
                Assert.Equal(expected.AccessWait, evaluator.Explain(path).AccessWait.Value);
                Assert.Equal(NaiveApplies(evaluator.Policy.Excludes.Select(e => e.Glob), path, isDirectory: true), evaluator.IsExcluded(path, isDirectory: true));
            }
        }
    }

    private static string RandomPolicy(Random random, int round)
    {
        var excludes = Enumerable.Range(0, random.Next(0, 6)).Select(_ => $"\"{Shapes[random.Next(Shapes.Length)]}\"").Distinct().ToList();
        var rules = Enumerable.Range(0, random.Next(0, 10)).Select(i =>
        {
            var paths = string.Join(", ", Enumerable.Range(0, random.Next(1, 3)).Select(_ => $"\"{Shapes[random.Next(Shapes.Length)]}\""));
            return random.Next(2) == 0 ? $"      - {{ paths: [ {paths} ], pin: {(random.Next(3) > 0 ? "true" : "false")} }}" : $"      - {{ paths: [ {paths} ], accessWait: {i + 1}d }}";
        });
        var text = $"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: {"{"} name: p{round} {"}"}
            spec:
              stubbing:
                rules:
            {string.Join('\n', rules.DefaultIfEmpty("      - { paths: [ \"none/\" ], accessWait: 1d }"))}
              excludes: [ {string.Join(", ", excludes)} ]
            """;
        // Random rules may contradict each other (the same pattern pinned and unpinned); draw again then.
        return PolicyLoader.ValidateText(text, "p.yaml").Count == 0 ? text : RandomPolicy(random, round);
    }

    private static (bool Excluded, bool Pinned, TimeSpan AccessWait) Naive(EffectivePolicy policy, string path)
    {
        var excluded = policy.Excludes.Any(e => NaiveApplies([e.Glob], path, isDirectory: false));
        var pin = policy.StubbingRules.LastOrDefault(r => r.Pin is not null && NaiveApplies(r.Paths.Select(p => p.Glob), path, false));
        var wait = policy.StubbingRules.LastOrDefault(r => r.AccessWait is not null && NaiveApplies(r.Paths.Select(p => p.Glob), path, false));
        return (excluded, !excluded && pin?.Pin!.Value == true, wait?.AccessWait!.Value ?? policy.AccessWait.Value);
    }

    // The definition: the pattern names the path itself, or one of the folders it is in.
    private static bool NaiveApplies(IEnumerable<Glob> globs, string path, bool isDirectory)
    {
        var segments = path.Split('/');
        return globs.Any(g => g.IsMatch(path, isDirectory)
            || Enumerable.Range(1, segments.Length - 1).Any(n => g.IsMatch(string.Join('/', segments[..n]), isDirectory: true)));
    }
}
