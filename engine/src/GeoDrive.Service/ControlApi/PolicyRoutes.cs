using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.ControlApi;

/// <summary>Get-CloudPolicy and Get-CloudPolicyDecision: a drive's policy files, its merged policy, and one path's decisions with their reasons.</summary>
public static class PolicyRoutes
{
    public static void Map(WebApplication app)
    {
        app.MapGet(ApiRoutes.Drives + "/{name}/policy", async (string name, DriveRegistry drives, CancellationToken ct) =>
            Files(await drives.DefinitionAsync(name, ct), drives.RunningHost(name)));

        app.MapGet(ApiRoutes.Drives + "/{name}/policy/effective", (string name, DriveRegistry drives) =>
        {
            var engine = drives.Engine(name);
            var policy = engine.Policy.Policy;
            return policy.Settings().Select(s => new PolicySettingInfo
            {
                Drive = engine.Name,
                Setting = s.Key,
                Value = s.Value,
                Source = s.Origin.ToString(),
                Policy = PolicyName(policy, s.Origin),
                File = s.Origin.IsDefault ? null : s.Origin.File,
                Line = s.Origin.Line,
            }).ToList();
        });

        app.MapGet(ApiRoutes.Drives + "/{name}/policy/decision", (string name, string? path, string? process, DriveRegistry drives) =>
        {
            if (string.IsNullOrWhiteSpace(path))
            {
                throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument, "No path was given.", "Give a drive-relative path, e.g. -Path Active/plan.xlsx.");
            }
            var engine = drives.Engine(name);
            return Decide(engine.Name, engine.Policy, DrivePath.Normalize(path.Replace('\\', '/')), engine.GetFile(path.Replace('\\', '/')), process);
        });
    }

    private static List<PolicyFileInfo> Files(DriveDefinition definition, DriveHost? host)
    {
        var loaded = host?.Engine.PolicyLoadedUtc;
        var documents = host?.Engine.Policy.Policy.Documents ?? [];
        var files = new List<PolicyFileInfo>();
        for (var i = 0; i < definition.PolicyPaths.Length; i++)
        {
            var path = definition.PolicyPaths[i];
            var problems = PolicyLoader.Validate(path);
            DateTimeOffset? modified = File.Exists(path) ? new DateTimeOffset(File.GetLastWriteTimeUtc(path), TimeSpan.Zero) : null;
            var status = problems.Any(p => p.ErrorId == ErrorIds.PolicyFileNotFound) ? "Missing"
                : problems.Count > 0 ? "Invalid"
                : loaded is null ? "NotLoaded"
                : modified > loaded ? "Changed"
                : "InForce";
            files.Add(new PolicyFileInfo
            {
                Drive = definition.Name,
                Order = i + 1,
                Path = path,
                PolicyName = documents.FirstOrDefault(d => d.File == path)?.Name.Value ?? (problems.Count == 0 ? PolicyLoader.Load(path).Name.Value : null),
                Status = status,
                LoadedAt = loaded,
                Modified = modified,
                Problem = problems.Count > 0 ? problems[0].ToString() : null,
                ErrorId = problems.Count > 0 ? problems[0].ErrorId : null,
                ProblemCount = problems.Count,
            });
        }
        return files;
    }

    private static PolicyDecisionInfo Decide(string drive, PolicyEvaluator evaluator, string path, FileEntry? entry, string? process)
    {
        var policy = evaluator.Policy;
        var explanation = evaluator.Explain(path);
        var reasons = new List<PolicyReasonInfo>
        {
            Reason(policy, "Excluded", explanation.Excluded),
            Reason(policy, "Pinned", explanation.Pinned),
            Reason(policy, "AccessWait", explanation.AccessWait),
        };
        var (stubAfter, outlook, outlookReason) = Outlook(evaluator, explanation, entry);
        reasons.Add(Reason(policy, "Stubbing", new PolicyDecision<string>(outlook, outlookReason.Reason, outlookReason.Origin)));

        var tags = new Dictionary<string, string>(StringComparer.Ordinal);
        if (!explanation.Excluded.Value)
        {
            foreach (var (tag, decision) in evaluator.ExplainTags(path))
            {
                tags[tag] = decision.Value;
                reasons.Add(Reason(policy, "Tag " + tag, decision));
            }
        }

        ProcessExplanation? treatment = null;
        if (!string.IsNullOrWhiteSpace(process))
        {
            treatment = evaluator.ExplainProcess(process);
            reasons.Add(Reason(policy, "FolderSync", treatment.FolderSync));
            reasons.Add(Reason(policy, "FileSync", treatment.FileSync));
            reasons.Add(Reason(policy, "FileNotFound", treatment.FileNotFound));
            reasons.Add(Reason(policy, "Recall", treatment.Recall));
        }

        return new PolicyDecisionInfo
        {
            Drive = drive,
            Path = path,
            State = entry?.State.ToString(),
            LastAccess = entry?.LastAccessUtc,
            Excluded = explanation.Excluded.Value,
            Pinned = explanation.Pinned.Value || entry?.Pinned == true,
            StubbingEnabled = explanation.StubbingEnabled.Value,
            AccessWait = explanation.AccessWait.Value,
            StubAfter = stubAfter,
            Stubbing = outlook,
            Tags = tags,
            Process = treatment?.ImageName,
            FolderSync = treatment?.FolderSync.Value.ToString(),
            FileSync = treatment?.FileSync.Value.ToString(),
            FileNotFound = treatment?.FileNotFound.Value.ToString(),
            Recall = treatment?.Recall.Value.ToString(),
            Reasons = [.. reasons],
        };
    }

    // When the access wait would let the scheduler stub the file, in the order the engine checks (DriveEngine.StubDueAsync).
    private static (DateTimeOffset? At, string Outlook, PolicyDecision<bool> Why) Outlook(PolicyEvaluator evaluator, PolicyExplanation e, FileEntry? entry)
    {
        if (e.Excluded.Value)
        {
            return (null, "never: excluded", e.Excluded);
        }
        if (!e.StubbingEnabled.Value)
        {
            return (null, "never: stubbing is disabled (mirror mode)", e.StubbingEnabled);
        }
        if (e.Pinned.Value)
        {
            return (null, "never: pinned", e.Pinned);
        }
        var wait = PolicyUnits.FormatDuration(e.AccessWait.Value);
        if (entry is null)
        {
            return (null, $"{wait} after its last access, once uploaded (the drive has no such file yet)", Because(e.AccessWait));
        }
        if (entry.Pinned)
        {
            return (null, "never: the file is pinned in the drive's index", new PolicyDecision<bool>(true, "pinned on the file itself", null));
        }
        if (entry.Size < evaluator.MinimumSize)
        {
            var minimum = evaluator.Policy.MinimumSize;
            return (null, $"never: smaller than minimumSize {ByteSize.Format(minimum.Value)}",
                new PolicyDecision<bool>(true, "spec.stubbing.minimumSize", minimum.Origin.IsDefault ? null : minimum.Origin));
        }
        var at = entry.LastAccessUtc + e.AccessWait.Value;
        return entry.State switch
        {
            FileState.Stubbed or FileState.Recalling => (null, $"already {entry.State.ToString().ToLowerInvariant()}", Because(e.AccessWait)),
            FileState.Excluded => (null, "never: excluded when it was written", Because(e.Excluded)),
            FileState.Dirty or FileState.Uploading => (at, $"once uploaded, from {at:u} ({wait} after its last access)", Because(e.AccessWait)),
            _ => (at, $"from {at:u} ({wait} after its last access)", Because(e.AccessWait)),
        };
    }

    private static PolicyDecision<bool> Because<T>(PolicyDecision<T> decision) => new(true, decision.Reason, decision.Origin);

    private static PolicyReasonInfo Reason<T>(EffectivePolicy policy, string question, PolicyDecision<T> decision) => new()
    {
        Question = question,
        Answer = decision.Value switch
        {
            bool b => b ? "yes" : "no",
            TimeSpan t => PolicyUnits.FormatDuration(t),
            Enum x => x.ToString().ToLowerInvariant(),
            _ => decision.Value?.ToString() ?? "",
        },
        Reason = decision.Reason,
        Source = decision.Origin?.ToString() ?? SourceLocation.Default.ToString(),
        Policy = decision.Origin is null ? null : PolicyName(policy, decision.Origin),
        File = decision.Origin?.File,
        Line = decision.Origin?.Line ?? 0,
    };

    private static string? PolicyName(EffectivePolicy policy, SourceLocation origin) =>
        origin.IsDefault ? null : policy.Documents.FirstOrDefault(d => d.File == origin.File)?.Name.Value;
}
