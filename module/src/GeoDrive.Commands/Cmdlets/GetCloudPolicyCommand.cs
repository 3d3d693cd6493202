using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>
/// A drive's policy files in layer order with their status and the time the policy in force was loaded;
/// with -Effective the merged policy, setting by setting, with the file and line each value came from.
/// </summary>
[Cmdlet(VerbsCommon.Get, "CloudPolicy")]
[OutputType(typeof(PolicyFileInfo))]
[OutputType(typeof(PolicySettingInfo))]
public sealed class GetCloudPolicyCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>The drive; binds from a DriveInfo's Name (Get-CloudDrive | Get-CloudPolicy).</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>The merged policy with the source of every value, instead of the list of files.</summary>
    [Parameter]
    public SwitchParameter Effective { get; set; }

    #endregion

    protected override void ProcessRecord() =>
        Try(Drive, () =>
        {
            if (Effective)
            {
                WriteObject(Call((c, ct) => c.GetEffectivePolicyAsync(Drive, ct)), enumerateCollection: true);
            }
            else
            {
                WriteObject(Call((c, ct) => c.GetPolicyFilesAsync(Drive, ct)), enumerateCollection: true);
            }
        });
}
