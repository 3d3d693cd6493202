namespace GeoDrive.Core.Model;

/// <summary>
/// What a drive remembers of one scheduled recall job across restarts: its definition (for a job
/// registered by Register-CloudRecallJob; a policy's job is defined by the policy and only its
/// schedule state lives here), which cron slots it has handled, and how its last run went.
/// </summary>
public sealed class RecallJobRecord
{
    public required string Name { get; set; }

    /// <summary>Registered (by cmdlet) or Policy (declared in a policy file's recallJobs).</summary>
    public RecallJobSource Source { get; set; }

    /// <summary>Drive-relative path patterns; with <see cref="Recurse"/> a folder path means everything under it.</summary>
    public string[] Paths { get; set; } = [];

    public bool Recurse { get; set; }

    /// <summary>Five-field cron expression (or a macro such as @daily).</summary>
    public string Schedule { get; set; } = "";

    /// <summary>Time zone the schedule is read in (an IANA or Windows id); null = the service's local zone.</summary>
    public string? TimeZone { get; set; }

    /// <summary>Files recalled at once.</summary>
    public int ThrottleLimit { get; set; } = 8;

    public DateTimeOffset RegisteredUtc { get; set; }

    /// <summary>Every cron slot at or before this time has been handled (run, or passed while the job ran): the next run is the first slot after it.</summary>
    public DateTimeOffset HandledUntilUtc { get; set; }

    public DateTimeOffset? LastRunStartUtc { get; set; }
    public DateTimeOffset? LastRunEndUtc { get; set; }
    public int LastFiles { get; set; }
    public long LastBytes { get; set; }
    public int LastFailures { get; set; }
    public RecallJobResult? LastResult { get; set; }
    public string? LastMessage { get; set; }
    public int RunCount { get; set; }
}

public enum RecallJobSource
{
    Registered,
    Policy,
}

public enum RecallJobResult
{
    /// <summary>The run is in progress (or the service stopped during it; see <see cref="Interrupted"/>).</summary>
    Running,
    Succeeded,
    /// <summary>Some files were recalled, some failed.</summary>
    PartlyFailed,
    /// <summary>Every file the job found failed (or the job could not start).</summary>
    Failed,
    /// <summary>The service stopped during the run; the job runs again at the next start.</summary>
    Interrupted,
}
