using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Evaluation;

/// <summary>
/// Answers the engine's questions about one path from an <see cref="EffectivePolicy"/>. Immutable and
/// thread-safe: a policy change builds a new evaluator. Paths are drive-relative and '/'-separated.
/// Rules that name a folder apply to everything under it.
/// </summary>
public sealed class PolicyEvaluator
{
    public PolicyEvaluator(EffectivePolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        Policy = policy;
    }

    public EffectivePolicy Policy { get; }

    public bool StubbingEnabled => Policy.StubbingEnabled.Value;

    /// <summary>Files smaller than this are never stubbed (bytes).</summary>
    public long MinimumSize => Policy.MinimumSize.Value;

    public TimeSpan Settle => Policy.Settle.Value;

    public UploadMode Mode => Policy.UploadMode.Value;

    public TimeSpan UpdateWait => Policy.UpdateWait.Value;

    /// <summary>True when an exclude names the path or a folder it is in: never uploaded, never stubbed.</summary>
    public bool IsExcluded(string path, bool isDirectory) => ExcludedBy(path, isDirectory) is not null;

    /// <summary>True when the last stubbing rule with 'pin' that applies says pin: true. Excluded files are never pinned.</summary>
    public bool IsPinned(string path) => PinDecision(path).Value;

    /// <summary>How long after its last access a file may be stubbed: the last applying rule with an accessWait, else the default.</summary>
    public TimeSpan AccessWaitFor(string path) => AccessWaitDecision(path).Value;

    /// <summary>The tags for the path's object: every applying metadata rule in order, later values overriding earlier ones.</summary>
    public IReadOnlyDictionary<string, string> TagsFor(string path)
    {
        var tags = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var rule in Policy.Metadata)
        {
            if (rule.MatchFor(path) is not null)
            {
                foreach (var (key, value) in rule.Tags)
                {
                    tags[key] = value.Value;
                }
            }
        }
        return tags;
    }

    /// <summary>How a process (by image name) is treated: for each setting the last applying rule that sets it, else the default.</summary>
    public ProcessTreatment ProcessTreatmentFor(string imageName)
    {
        var rules = Policy.ProcessExcludes.Where(r => r.Process.Value.IsMatch(imageName)).ToList();
        return new ProcessTreatment(
            rules.Select(r => r.FolderSync).LastOrDefault(v => v is not null)?.Value ?? PolicyDefaults.FolderSync,
            rules.Select(r => r.FileSync).LastOrDefault(v => v is not null)?.Value ?? PolicyDefaults.FileSync,
            rules.Select(r => r.FileNotFound).LastOrDefault(v => v is not null)?.Value ?? PolicyDefaults.FileNotFound,
            rules.Select(r => r.Recall).LastOrDefault(v => v is not null)?.Value ?? PolicyDefaults.Recall);
    }

    /// <summary>The upload and download limits (bytes per second, 0 = unlimited) in force at a local time: the last covering window's, else the base limits.</summary>
    public (long Upload, long Download) ThrottleAt(DateTime localTime)
    {
        var upload = Policy.UploadLimit.Value;
        var download = Policy.DownloadLimit.Value;
        foreach (var window in Policy.ThrottleSchedule.Where(w => w.Covers(localTime)))
        {
            upload = window.Upload?.Value ?? upload;
            download = window.Download?.Value ?? download;
        }
        return (upload, download);
    }

    /// <summary>Which file and line decided exclusion, pin and access wait for the path.</summary>
    public PolicyExplanation Explain(string path, bool isDirectory = false)
    {
        var excludedBy = ExcludedBy(path, isDirectory);
        var excluded = excludedBy is null
            ? new PolicyDecision<bool>(false, "no exclude applies", null)
            : new PolicyDecision<bool>(true, $"excluded by '{excludedBy.Pattern}'", excludedBy.Origin);
        return new PolicyExplanation(path, excluded, PinDecision(path), AccessWaitDecision(path),
            new PolicyDecision<bool>(StubbingEnabled, StubbingEnabled ? "stubbing is enabled" : "stubbing is disabled", Origin(Policy.StubbingEnabled)));
    }

    private PathPattern? ExcludedBy(string path, bool isDirectory) =>
        Policy.Excludes.FirstOrDefault(e => e.Glob.AppliesTo(path, isDirectory));

    private PolicyDecision<bool> PinDecision(string path)
    {
        if (ExcludedBy(path, isDirectory: false) is { } excluded)
        {
            // An excluded file never reaches the bucket, so there is nothing to keep or to stub.
            return new PolicyDecision<bool>(false, $"excluded by '{excluded.Pattern}', so never pinned", excluded.Origin);
        }
        for (var i = Policy.StubbingRules.Count - 1; i >= 0; i--)
        {
            var rule = Policy.StubbingRules[i];
            if (rule.Pin is { } pin && rule.MatchFor(path) is { } match)
            {
                return new PolicyDecision<bool>(pin.Value, $"{(pin.Value ? "pinned" : "unpinned")} by the rule for '{match.Pattern}'", pin.Origin);
            }
        }
        return new PolicyDecision<bool>(false, "no pin rule applies", null);
    }

    private PolicyDecision<TimeSpan> AccessWaitDecision(string path)
    {
        for (var i = Policy.StubbingRules.Count - 1; i >= 0; i--)
        {
            var rule = Policy.StubbingRules[i];
            if (rule.AccessWait is { } wait && rule.MatchFor(path) is { } match)
            {
                return new PolicyDecision<TimeSpan>(wait.Value, $"the rule for '{match.Pattern}'", wait.Origin);
            }
        }
        var fallback = Policy.AccessWait;
        return new PolicyDecision<TimeSpan>(fallback.Value, fallback.Origin.IsDefault ? "the built-in default" : "spec.stubbing.accessWait", Origin(fallback));
    }

    private static SourceLocation? Origin<T>(PolicyValue<T> value) => value.Origin.IsDefault ? null : value.Origin;
}
