using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// Lists scheduled recall jobs, the registered ones and those declared in policies: schedule, next run,
/// and the last run's files, bytes, failures and result.
/// </summary>
[Cmdlet(VerbsCommon.Get, "CloudRecallJob")]
[OutputType(typeof(RecallJobInfo))]
public sealed class GetCloudRecallJobCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>Drives whose jobs to list (wildcards); all when left out.</summary>
    [Parameter(Position = 0, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Drive { get; set; } = ["*"];

    /// <summary>Job names (wildcards).</summary>
    [Parameter(Position = 1)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Name { get; set; } = ["*"];

    /// <summary>A drive from Get-CloudDrive (so `Get-CloudDrive | Get-CloudRecallJob` lists each drive's jobs).</summary>
    [Parameter(ValueFromPipeline = true)]
    public DriveInfo? InputObject { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        var drives = InputObject is not null ? [InputObject.Name] : Drive;
        var patterns = Name.Select(Wildcards.Name).ToList();
        Try(drives, () =>
        {
            foreach (var drive in ExpandDriveNames(drives))
            {
                Try(drive, () =>
                {
                    var jobs = Call((c, ct) => c.GetRecallJobsAsync(drive, ct));
                    foreach (var job in jobs.Where(j => patterns.Any(p => p.IsMatch(j.Name))))
                    {
                        WriteObject(job);
                    }
                    // A literal name that matches nothing is an error, as Get-Item's would be.
                    foreach (var missing in Name.Where(n => !Wildcards.IsPattern(n) && !jobs.Any(j => string.Equals(j.Name, n, StringComparison.OrdinalIgnoreCase))))
                    {
                        WriteError(NewError(ErrorIds.RecallJobNotFound, ErrorKind.ObjectNotFound,
                            $"The drive '{drive}' has no recall job named '{missing}'.", "List the drive's jobs with Get-CloudRecallJob -Drive " + drive + ".", missing));
                    }
                });
            }
        });
    }
}
