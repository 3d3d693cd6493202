namespace GeoDrive.Api;

/// <summary>A scheduled recall job as Get-CloudRecallJob shows it: its definition, where it comes from, and its last run.</summary>
public sealed class RecallJobInfo
{
    public required string Drive { get; init; }
    public required string Name { get; init; }
    /// <summary>"Registered" (Register-CloudRecallJob) or "Policy" (a policy file's recallJobs).</summary>
    public required string Source { get; init; }
    /// <summary>For a policy job: file:line:column of its declaration.</summary>
    public string? DeclaredAt { get; init; }
    public string[] Paths { get; init; } = [];
    public bool Recurse { get; init; }
    public required string Schedule { get; init; }
    /// <summary>The zone the schedule is read in.</summary>
    public required string TimeZone { get; init; }
    public int ThrottleLimit { get; init; }
    public DateTimeOffset Registered { get; init; }
    public DateTimeOffset? NextRun { get; init; }
    public bool Running { get; init; }
    public DateTimeOffset? LastRun { get; init; }
    public DateTimeOffset? LastRunEnd { get; init; }
    /// <summary>Running, Succeeded, PartlyFailed, Failed or Interrupted; null before the first run.</summary>
    public string? LastResult { get; init; }
    public int Files { get; init; }
    public long Bytes { get; init; }
    public int Failures { get; init; }
    public string? LastMessage { get; init; }
    public int RunCount { get; init; }
}

public sealed class RegisterRecallJobRequest
{
    public required string Name { get; init; }
    public required string[] Paths { get; init; }
    public bool Recurse { get; init; }
    public required string Schedule { get; init; }
    public string? TimeZone { get; init; }
    public int ThrottleLimit { get; init; } = 8;
}

/// <summary>The control API's recall-job routes (beside <see cref="ApiRoutes"/>).</summary>
public static class RecallJobApiRoutes
{
    public static string Jobs(string drive) => $"{ApiRoutes.Drive(drive)}/recall-jobs";
    public static string Job(string drive, string name) => $"{Jobs(drive)}/{Uri.EscapeDataString(name)}";
}
