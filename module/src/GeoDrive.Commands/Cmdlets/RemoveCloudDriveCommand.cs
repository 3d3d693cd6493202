using System.Management.Automation;

namespace GeoDrive.Commands;

/// <summary>
/// Forgets a cloud drive: dismounts it and deletes its definition. Never deletes the cache folder
/// or anything in the bucket.
/// </summary>
[Cmdlet(VerbsCommon.Remove, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.High)]
[OutputType(typeof(void))]
public sealed class RemoveCloudDriveCommand : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Mandatory = true, Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Name { get; set; } = [];

    /// <summary>Skip the confirmation question (not -WhatIf).</summary>
    [Parameter]
    public SwitchParameter Force { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        Try(Name, () =>
        {
            foreach (var name in ExpandDriveNames(Name))
            {
                if (ShouldProcessForced(name, "Remove cloud drive (the cache folder and the bucket are kept)", Force))
                {
                    Try(name, () => Call((c, ct) => c.RemoveDriveAsync(name, ct)));
                }
            }
        });
    }
}
