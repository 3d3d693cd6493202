using System.Management.Automation;

namespace GeoDrive.Commands;

/// <summary>Dismounts a cloud drive; its files stay in the cache and the bucket.</summary>
[Cmdlet(VerbsData.Dismount, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class DismountCloudDriveCommand : GeoDriveCmdlet
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

    protected override void ProcessRecord()
    {
        Try(Name, () =>
        {
            foreach (var name in ExpandDriveNames(Name))
            {
                if (ShouldProcess(name, "Dismount cloud drive"))
                {
                    Try(name, () =>
                    {
                        var drive = Call((c, ct) => c.DismountDriveAsync(name, ct));
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
