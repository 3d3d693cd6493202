using GeoDrive.Policies.Globs;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Evaluation;

/// <summary>
/// Answers the engine's questions about one path from an <see cref="EffectivePolicy"/>. Immutable and
/// thread-safe: a policy change builds a new evaluator. Paths are drive-relative and '/'-separated.
/// Rules that name a folder apply to everything under it.
/// </summary>
public sealed class PolicyEvaluator
{
    // Patterns indexed once per policy, so a decision matches only the few that could apply (GlobIndex).
    private const int Excludes = 0, Pins = 1, Waits = 2;
    private readonly GlobIndex _index;

    public PolicyEvaluator(EffectivePolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        Policy = policy;
        _index = new GlobIndex(
            policy.Excludes.Select(e => ((object)e, e.Glob, Excludes))
                .Concat(Rules(r => r.Pin is not null, Pins))
                .Concat(Rules(r => r.AccessWait is not null, Waits)));

        IEnumerable<(object, Glob, int)> Rules(Func<StubbingRule, bool> sets, int list) =>
            policy.StubbingRules.Where(sets).SelectMany(r => r.Paths.Select(p => ((object)r, p.Glob, list)));
    }

    public EffectivePolicy Policy { get; }

    public bool StubbingEnabled => Policy.StubbingEnabled.Value;

    /// <summary>Files smaller than this are never stubbed (bytes).</summary>
    public long MinimumSize => Policy.MinimumSize.Value;

    public TimeSpan Settle => Policy.Settle.Value;

    public UploadMode Mode => Policy.UploadMode.Value;

    public TimeSpan UpdateWait => Policy.UpdateWait.Value;

    /// <summary>What the drive does with a file a peer told it of: a stub, or a stub recalled at once.</summary>
    public PeerChangeAction PeerChanges => Policy.PeerChanges.Value;

    /// <summary>True when an exclude names the path or a folder it is in: never uploaded, never stubbed.</summary>
    public bool IsExcluded(string path, bool isDirectory) => ExcludedBy(path, isDirectory) is not null;

    /// <summary>True when the last stubbing rule with 'pin' that applies says pin: true. Excluded files are never pinned.</summary>
    public bool IsPinned(string path) => StubbingFor(path).Pinned;

    /// <summary>How long after its last access a file may be stubbed: the last applying rule with an accessWait, else the default.</summary>
    public TimeSpan AccessWaitFor(string path) => StubbingFor(path).AccessWait;

    /// <summary>
    /// What the stubbing scan asks of a file, in one pass over its names: excluded? pinned (never when
    /// excluded)? access wait? The same answers as <see cref="Explain"/>, without the explanations.
    /// </summary>
    public (bool Excluded, bool Pinned, TimeSpan AccessWait) StubbingFor(string path)
    {
        Span<ulong> candidates = _index.Words <= 16 ? stackalloc ulong[_index.Words] : new ulong[_index.Words];
        _index.Candidates(path, candidates);
        var excluded = _index.First(Excludes, path, isDirectory: false, candidates) is not null;
        var pinned = !excluded && _index.Last(Pins, path, isDirectory: false, candidates) is StubbingRule { Pin.Value: true };
        var wait = _index.Last(Waits, path, isDirectory: false, candidates) is StubbingRule { AccessWait: { } w } ? w.Value : Policy.AccessWait.Value;
        return (excluded, pinned, wait);
    }

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

    /// <summary>
    /// The tags also written as S3 object tags (rules with objectTags: true), in rule order with later values
    /// overriding earlier ones; S3 keeps at most 10 on an object, so the first 10 names are kept.
    /// </summary>
    public IReadOnlyDictionary<string, string> ObjectTagsFor(string path)
    {
        var tags = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var rule in Policy.Metadata)
        {
            if (rule.ObjectTags is { Value: true } && rule.MatchFor(path) is not null)
            {
                foreach (var (key, value) in rule.Tags)
                {
                    if (tags.ContainsKey(key) || tags.Count < MaxObjectTags)
                    {
                        tags[key] = value.Value;
                    }
                }
            }
        }
        return tags;
    }

    /// <summary>S3's limit of tags on one object.</summary>
    public const int MaxObjectTags = 10;

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

    private PathPattern? ExcludedBy(string path, bool isDirectory) => (PathPattern?)Find(Excludes, path, isDirectory, last: false);

    private object? Find(int list, string path, bool isDirectory, bool last)
    {
        Span<ulong> candidates = _index.Words <= 16 ? stackalloc ulong[_index.Words] : new ulong[_index.Words];
        _index.Candidates(path, candidates);
        return last ? _index.Last(list, path, isDirectory, candidates) : _index.First(list, path, isDirectory, candidates);
    }

    private PolicyDecision<bool> PinDecision(string path)
    {
        if (ExcludedBy(path, isDirectory: false) is { } excluded)
        {
            // An excluded file never reaches the bucket, so there is nothing to keep or to stub.
            return new PolicyDecision<bool>(false, $"excluded by '{excluded.Pattern}', so never pinned", excluded.Origin);
        }
        // The last rule with 'pin' that applies decides; MatchFor names its first applying pattern.
        if (Find(Pins, path, isDirectory: false, last: true) is StubbingRule { Pin: { } pin } rule && rule.MatchFor(path) is { } match)
        {
            return new PolicyDecision<bool>(pin.Value, $"{(pin.Value ? "pinned" : "unpinned")} by the rule for '{match.Pattern}'", pin.Origin);
        }
        return new PolicyDecision<bool>(false, "no pin rule applies", null);
    }

    private PolicyDecision<TimeSpan> AccessWaitDecision(string path)
    {
        if (Find(Waits, path, isDirectory: false, last: true) is StubbingRule { AccessWait: { } wait } rule && rule.MatchFor(path) is { } match)
        {
            return new PolicyDecision<TimeSpan>(wait.Value, $"the rule for '{match.Pattern}'", wait.Origin);
        }
        var fallback = Policy.AccessWait;
        return new PolicyDecision<TimeSpan>(fallback.Value, fallback.Origin.IsDefault ? "the built-in default" : "spec.stubbing.accessWait", Origin(fallback));
    }

    private static SourceLocation? Origin<T>(PolicyValue<T> value) => value.Origin.IsDefault ? null : value.Origin;
}
