using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Policies.Model;

namespace GeoDrive.Commands;

/// <summary>
/// Registers a scheduled recall job on a drive: the service recalls the stubs under -Path at each cron
/// time (-Schedule), one job at a time per drive, and keeps its history (Get-CloudRecallJob).
/// </summary>
[Cmdlet(VerbsLifecycle.Register, "CloudRecallJob", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Low)]
[OutputType(typeof(RecallJobInfo))]
public sealed class RegisterCloudRecallJobCommand : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>The job's name, unique on the drive.</summary>
    [Parameter(Mandatory = true, Position = 0)]
    [ValidateNotNullOrEmpty]
    public string Name { get; set; } = "";

    /// <summary>Drive-relative paths or patterns ('*', '?', '**') of the files to recall.</summary>
    [Parameter(Mandatory = true, Position = 1)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    /// <summary>A folder path recalls everything under it.</summary>
    [Parameter]
    public SwitchParameter Recurse { get; set; }

    /// <summary>Five cron fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly.</summary>
    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string Schedule { get; set; } = "";

    /// <summary>The time zone the schedule is read in (e.g. 'Europe/Berlin', 'UTC'); the service's local time when left out.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string? TimeZone { get; set; }

    /// <summary>Files recalled at once.</summary>
    [Parameter]
    [ValidateRange(1, 256)]
    public int ThrottleLimit { get; set; } = 8;

    #endregion

    protected override void ProcessRecord()
    {
        // A bad schedule is refused here, before anything is sent, with the field at fault.
        if (!CronSchedule.TryParse(Schedule, out _, out var problem))
        {
            WriteError(NewError(ErrorIds.InvalidCron, ErrorKind.InvalidArgument,
                $"The schedule '{Schedule}' is not a valid cron expression: {problem}.",
                "Write five fields in quotes, minute hour day-of-month month day-of-week (e.g. '0 6 * * 1-5' for 06:00 on weekdays), or @hourly/@daily/@weekly/@monthly.",
                Schedule));
            return;
        }
        var target = $"recall job '{Name}' on drive {Drive}: {string.Join(", ", Path)}{(Recurse ? " (recursive)" : "")} at '{Schedule}'{(TimeZone is null ? "" : " " + TimeZone)}";
        if (!ShouldProcess(target, "Register"))
        {
            return;
        }
        Try(Name, () => WriteObject(Call((c, ct) => c.RegisterRecallJobAsync(Drive, new RegisterRecallJobRequest
        {
            Name = Name,
            Paths = Path,
            Recurse = Recurse,
            Schedule = Schedule,
            TimeZone = TimeZone,
            ThrottleLimit = ThrottleLimit,
        }, ct))));
    }
}
