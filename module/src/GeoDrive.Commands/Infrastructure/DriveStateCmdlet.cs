using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>
/// The shape of the cmdlets that change one thing about whole drives (Mount, Dismount, Suspend,
/// Resume, Set): names with wildcards from the pipeline, one ShouldProcess and one request per drive,
/// -PassThru for the drive as it is afterwards.
/// </summary>
public abstract class DriveStateCmdlet : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Mandatory = true, Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Name { get; set; } = [];

    /// <summary>Return the drive after the change.</summary>
    [Parameter]
    public SwitchParameter PassThru { get; set; }

    #endregion

    /// <summary>What ShouldProcess names, e.g. "Mount cloud drive".</summary>
    protected abstract string Action { get; }

    protected abstract Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken);

    protected override void ProcessRecord()
    {
        Try(Name, () =>
        {
            foreach (var name in ExpandDriveNames(Name))
            {
                if (ShouldProcess(name, Action))
                {
                    Try(name, () =>
                    {
                        var drive = Call((c, ct) => SendAsync(c, name, ct));
                        if (PassThru)
                        {
                            WriteObject(drive);
                        }
                    });
                }
            }
        });
    }
}
