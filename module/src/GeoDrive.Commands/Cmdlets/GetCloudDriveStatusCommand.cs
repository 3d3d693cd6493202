using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Shows what a drive's transfers are doing: queues, bytes in flight, rates and totals.</summary>
[Cmdlet(VerbsCommon.Get, "CloudDriveStatus")]
[OutputType(typeof(DriveStatusInfo))]
public sealed class GetCloudDriveStatusCommand : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Name { get; set; } = ["*"];

    #endregion

    protected override void ProcessRecord()
    {
        Try(Name, () =>
        {
            foreach (var name in ExpandDriveNames(Name))
            {
                Try(name, () => WriteObject(Call((c, ct) => c.GetDriveStatusAsync(name, ct))));
            }
        });
    }
}
