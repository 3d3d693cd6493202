using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Evaluation;

/// <summary>How a process's requests are treated, each setting with the rule that decided it.</summary>
public sealed record ProcessExplanation(
    string ImageName,
    PolicyDecision<SyncAction> FolderSync,
    PolicyDecision<SyncAction> FileSync,
    PolicyDecision<SyncAction> FileNotFound,
    PolicyDecision<RecallAction> Recall);

/// <summary>The explanations behind <see cref="PolicyEvaluator.TagsFor"/> and <see cref="PolicyEvaluator.ProcessTreatmentFor"/> (Get-CloudPolicyDecision).</summary>
public static class PolicyExplanations
{
    /// <summary>Each tag of the path's object with the metadata rule that set it (for the same tag, the last applying rule wins).</summary>
    public static IReadOnlyList<(string Name, PolicyDecision<string> Decision)> ExplainTags(this PolicyEvaluator evaluator, string path)
    {
        ArgumentNullException.ThrowIfNull(evaluator);
        var tags = new Dictionary<string, PolicyDecision<string>>(StringComparer.Ordinal);
        foreach (var rule in evaluator.Policy.Metadata)
        {
            if (rule.MatchFor(path) is { } match)
            {
                foreach (var (key, value) in rule.Tags)
                {
                    tags[key] = new PolicyDecision<string>(value.Value, $"the metadata rule for '{match.Pattern}'", value.Origin);
                }
            }
        }
        return [.. tags.OrderBy(t => t.Key, StringComparer.Ordinal).Select(t => (t.Key, t.Value))];
    }

    /// <summary>For each process setting: the last rule matching the image name that sets it, else the built-in default.</summary>
    public static ProcessExplanation ExplainProcess(this PolicyEvaluator evaluator, string imageName)
    {
        ArgumentNullException.ThrowIfNull(evaluator);
        ArgumentNullException.ThrowIfNull(imageName);
        var rules = evaluator.Policy.ProcessExcludes.Where(r => r.Process.Value.IsMatch(imageName)).ToList();
        return new ProcessExplanation(
            imageName,
            Decide(rules, r => r.FolderSync, PolicyDefaults.FolderSync),
            Decide(rules, r => r.FileSync, PolicyDefaults.FileSync),
            Decide(rules, r => r.FileNotFound, PolicyDefaults.FileNotFound),
            Decide(rules, r => r.Recall, PolicyDefaults.Recall));
    }

    private static PolicyDecision<T> Decide<T>(List<ProcessRule> rules, Func<ProcessRule, PolicyValue<T>?> select, T fallback)
    {
        for (var i = rules.Count - 1; i >= 0; i--)
        {
            if (select(rules[i]) is { } value)
            {
                return new PolicyDecision<T>(value.Value, $"the rule for process '{rules[i].Process.Value.Pattern}'", value.Origin);
            }
        }
        return new PolicyDecision<T>(fallback, rules.Count == 0 ? "no process rule matches; the built-in default" : "no matching rule sets it; the built-in default", null);
    }
}
