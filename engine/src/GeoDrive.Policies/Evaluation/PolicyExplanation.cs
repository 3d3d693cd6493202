using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Evaluation;

/// <summary>One decision about a path: the outcome, which rule made it, and where that rule is written (null: a built-in default).</summary>
public sealed record PolicyDecision<T>(T Value, string Reason, SourceLocation? Origin)
{
    public override string ToString() => Origin is null ? $"{Format(Value)} ({Reason})" : $"{Format(Value)} ({Reason}, {Origin})";

    private static string Format(T value) => value switch
    {
        TimeSpan t => PolicyUnits.FormatDuration(t),
        bool b => b ? "yes" : "no",
        _ => value?.ToString() ?? "",
    };
}

/// <summary>Why the policy treats a path as it does; what Get-CloudFile -Explain (or the control API) shows.</summary>
public sealed record PolicyExplanation(
    string Path,
    PolicyDecision<bool> Excluded,
    PolicyDecision<bool> Pinned,
    PolicyDecision<TimeSpan> AccessWait,
    PolicyDecision<bool> StubbingEnabled)
{
    public override string ToString() =>
        $"{Path}: excluded {Excluded}; pinned {Pinned}; access wait {AccessWait}; stubbing {StubbingEnabled}";
}

/// <summary>How the engine treats a process's requests (processExcludes).</summary>
public sealed record ProcessTreatment(SyncAction FolderSync, SyncAction FileSync, SyncAction FileNotFound, RecallAction Recall)
{
    public static ProcessTreatment Default { get; } = new(PolicyDefaults.FolderSync, PolicyDefaults.FileSync, PolicyDefaults.FileNotFound, PolicyDefaults.Recall);
}
