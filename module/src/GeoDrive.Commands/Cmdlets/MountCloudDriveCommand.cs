using System.Management.Automation;

namespace GeoDrive.Commands;

/// <summary>Mounts a cloud drive at its mount path, so applications see its files.</summary>
[Cmdlet(VerbsData.Mount, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class MountCloudDriveCommand : GeoDriveCmdlet
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
                if (ShouldProcess(name, "Mount cloud drive"))
                {
                    Try(name, () =>
                    {
                        var drive = Call((c, ct) => c.MountDriveAsync(name, ct));
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
