using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Jobs;

/// <summary>A recall job as Register-CloudRecallJob gives it.</summary>
public sealed class RecallJobSpec
{
    public required string Name { get; init; }

    /// <summary>Drive-relative patterns ('*', '?', '**'), as Invoke-CloudRecall -Path takes them.</summary>
    public required string[] Paths { get; init; }

    /// <summary>A folder path recalls everything under it.</summary>
    public bool Recurse { get; init; }

    /// <summary>Five cron fields or a macro (@daily, @hourly …).</summary>
    public required string Schedule { get; init; }

    /// <summary>Time zone id the schedule is read in; null = the service's local zone.</summary>
    public string? TimeZone { get; init; }

    /// <summary>Files recalled at once.</summary>
    public int ThrottleLimit { get; init; } = 8;
}

/// <summary>One job as Get-CloudRecallJob shows it: definition, where it comes from, next run and last run.</summary>
public sealed record RecallJobView(
    RecallJobRecord Record,
    string TimeZone,
    string? DeclaredAt,
    DateTimeOffset? NextRunUtc,
    bool Running);
