using GeoDrive.Core.Errors;
using GeoDrive.Policies.Loading;

namespace GeoDrive.Policies.Model;

/// <summary>
/// What a drive actually runs with: its policy files laid over each other in order, and the built-in
/// defaults (<see cref="PolicyDefaults"/>) for whatever none of them says. A later file's scalar overrides an
/// earlier one; lists (rules, excludes, tags, process rules, throttle windows, recall jobs) concatenate.
/// Every value keeps the file and line it came from.
/// </summary>
public sealed partial class EffectivePolicy
{
    private EffectivePolicy()
    {
    }

    /// <summary>The files merged, in the order given.</summary>
    public IReadOnlyList<PolicyDocument> Documents { get; private init; } = [];

    public PolicyValue<bool> StubbingEnabled { get; private init; } = PolicyValue.Default(PolicyDefaults.StubbingEnabled);
    public PolicyValue<TimeSpan> AccessWait { get; private init; } = PolicyValue.Default(PolicyDefaults.AccessWait);
    public PolicyValue<long> MinimumSize { get; private init; } = PolicyValue.Default(PolicyDefaults.MinimumSize);
    public IReadOnlyList<StubbingRule> StubbingRules { get; private init; } = [];

    public PolicyValue<CacheLevel> StubAbove { get; private init; } = PolicyValue.Default(PolicyDefaults.StubAbove);
    public PolicyValue<CacheLevel> StubUntil { get; private init; } = PolicyValue.Default(PolicyDefaults.StubUntil);
    public PolicyValue<CacheLevel> ReserveFree { get; private init; } = PolicyValue.Default(PolicyDefaults.ReserveFree);

    public PolicyValue<UploadMode> UploadMode { get; private init; } = PolicyValue.Default(PolicyDefaults.Mode);
    public PolicyValue<TimeSpan> Settle { get; private init; } = PolicyValue.Default(PolicyDefaults.Settle);
    public PolicyValue<TimeSpan> UpdateWait { get; private init; } = PolicyValue.Default(PolicyDefaults.UpdateWait);
    public PolicyValue<PeerChangeAction> PeerChanges { get; private init; } = PolicyValue.Default(PolicyDefaults.PeerChanges);

    public IReadOnlyList<PathPattern> Excludes { get; private init; } = [];
    public IReadOnlyList<MetadataRule> Metadata { get; private init; } = [];
    public IReadOnlyList<ProcessRule> ProcessExcludes { get; private init; } = [];

    /// <summary>Bytes per second; 0 means unlimited.</summary>
    public PolicyValue<long> UploadLimit { get; private init; } = PolicyValue.Default(PolicyDefaults.UploadLimit);
    /// <summary>Bytes per second; 0 means unlimited.</summary>
    public PolicyValue<long> DownloadLimit { get; private init; } = PolicyValue.Default(PolicyDefaults.DownloadLimit);
    public IReadOnlyList<ThrottleWindow> ThrottleSchedule { get; private init; } = [];

    public PolicyValue<int> UploadThreads { get; private init; } = PolicyValue.Default(PolicyDefaults.UploadThreads);
    public PolicyValue<int> RestoreThreads { get; private init; } = PolicyValue.Default(PolicyDefaults.RestoreThreads);
    public PolicyValue<long> MultipartThreshold { get; private init; } = PolicyValue.Default(PolicyDefaults.MultipartThreshold);
    public PolicyValue<long> PartSize { get; private init; } = PolicyValue.Default(PolicyDefaults.PartSize);
    public PolicyValue<int> MultipartUploadThreads { get; private init; } = PolicyValue.Default(PolicyDefaults.MultipartUploadThreads);
    public PolicyValue<int> MultipartRestoreThreads { get; private init; } = PolicyValue.Default(PolicyDefaults.MultipartRestoreThreads);

    public IReadOnlyList<RecallJob> RecallJobs { get; private init; } = [];

    /// <summary>The built-in defaults alone: what a drive with no policy file would do.</summary>
    public static EffectivePolicy Defaults { get; } = new();

    /// <summary>Lays the documents over each other in order (later wins for single values; lists concatenate).</summary>
    /// <exception cref="PolicyException">The files contradict each other (cache thresholds the wrong way round, one recall job name twice).</exception>
    public static EffectivePolicy Merge(IEnumerable<PolicyDocument> documents)
    {
        ArgumentNullException.ThrowIfNull(documents);
        var docs = documents.ToList();
        var merged = new EffectivePolicy
        {
            Documents = docs,
            StubbingEnabled = Last(docs, d => d.Stubbing.Enabled, PolicyDefaults.StubbingEnabled),
            AccessWait = Last(docs, d => d.Stubbing.AccessWait, PolicyDefaults.AccessWait),
            MinimumSize = Last(docs, d => d.Stubbing.MinimumSize, PolicyDefaults.MinimumSize),
            StubbingRules = [.. docs.SelectMany(d => d.Stubbing.Rules)],
            StubAbove = Last(docs, d => d.CacheThresholds.StubAbove, PolicyDefaults.StubAbove),
            StubUntil = Last(docs, d => d.CacheThresholds.StubUntil, PolicyDefaults.StubUntil),
            ReserveFree = Last(docs, d => d.CacheThresholds.ReserveFree, PolicyDefaults.ReserveFree),
            UploadMode = Last(docs, d => d.Upload.Mode, PolicyDefaults.Mode),
            Settle = Last(docs, d => d.Upload.Settle, PolicyDefaults.Settle),
            UpdateWait = Last(docs, d => d.Upload.UpdateWait, PolicyDefaults.UpdateWait),
            PeerChanges = Last(docs, d => d.Upload.PeerChanges, PolicyDefaults.PeerChanges),
            Excludes = [.. docs.SelectMany(d => d.Excludes)],
            Metadata = [.. docs.SelectMany(d => d.Metadata)],
            ProcessExcludes = [.. docs.SelectMany(d => d.ProcessExcludes)],
            UploadLimit = Last(docs, d => d.Throttle.Upload, PolicyDefaults.UploadLimit),
            DownloadLimit = Last(docs, d => d.Throttle.Download, PolicyDefaults.DownloadLimit),
            ThrottleSchedule = [.. docs.SelectMany(d => d.Throttle.Schedule)],
            UploadThreads = Last(docs, d => d.Transfer.UploadThreads, PolicyDefaults.UploadThreads),
            RestoreThreads = Last(docs, d => d.Transfer.RestoreThreads, PolicyDefaults.RestoreThreads),
            MultipartThreshold = Last(docs, d => d.Transfer.Multipart.Threshold, PolicyDefaults.MultipartThreshold),
            PartSize = Last(docs, d => d.Transfer.Multipart.PartSize, PolicyDefaults.PartSize),
            MultipartUploadThreads = Last(docs, d => d.Transfer.Multipart.UploadThreads, PolicyDefaults.MultipartUploadThreads),
            MultipartRestoreThreads = Last(docs, d => d.Transfer.Multipart.RestoreThreads, PolicyDefaults.MultipartRestoreThreads),
            RecallJobs = [.. docs.SelectMany(d => d.RecallJobs)],
        };
        merged.CheckAcrossFiles();
        return merged;
    }

    private static PolicyValue<T> Last<T>(List<PolicyDocument> docs, Func<PolicyDocument, PolicyValue<T>?> select, T fallback) =>
        docs.Select(select).LastOrDefault(v => v is not null) ?? PolicyValue.Default(fallback);

    // Each file was checked on its own; these contradictions can only appear once files are laid together.
    private void CheckAcrossFiles()
    {
        var problems = new List<PolicyProblem>();
        var (above, until) = (StubAbove.Value, StubUntil.Value);
        if (above.IsPercent == until.IsPercent && (until.Percent ?? until.Bytes) >= (above.Percent ?? above.Bytes))
        {
            var blame = StubUntil.Origin.IsDefault ? StubAbove.Origin : StubUntil.Origin;
            problems.Add(new PolicyProblem(ErrorIds.PolicyBadValue, blame.File, blame.Line, blame.Column,
                $"together the policy files set stubUntil {until} ({StubUntil.Origin}) at or above stubAbove {above} ({StubAbove.Origin}); stubbing starts above the one and stops at the other",
                "Set both thresholds in the same file, stubUntil lower than stubAbove."));
        }
        foreach (var duplicate in RecallJobs.GroupBy(j => j.Name.Value, StringComparer.OrdinalIgnoreCase).Where(g => g.Count() > 1))
        {
            var second = duplicate.ElementAt(1).Name.Origin;
            problems.Add(new PolicyProblem(ErrorIds.PolicyBadValue, second.File, second.Line, second.Column,
                $"the recall job '{duplicate.Key}' is also defined at {duplicate.First().Name.Origin}",
                "Give each recall job its own name across all the drive's policy files."));
        }
        if (problems.Count > 0)
        {
            throw new PolicyException(problems);
        }
    }
}
