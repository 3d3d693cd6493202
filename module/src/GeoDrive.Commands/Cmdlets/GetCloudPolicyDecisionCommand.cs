using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>
/// What the policy decides for one path of a drive — excluded, pinned, access wait and when it would be
/// stubbed, tags, and a process's treatment — each with the policy file, rule and line that decided it.
/// </summary>
[Cmdlet(VerbsCommon.Get, "CloudPolicyDecision")]
[OutputType(typeof(PolicyDecisionInfo))]
public sealed class GetCloudPolicyDecisionCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>The drive; binds from a CloudFileInfo's Drive (Get-CloudFile | Get-CloudPolicyDecision).</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>Drive-relative paths, taken literally: the question is about one file, which need not exist yet.</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    /// <summary>A program's image name: also explain how its requests are treated (processExcludes).</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string? Process { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        foreach (var path in Path)
        {
            Try(path, () => WriteObject(Call((c, ct) => c.GetPolicyDecisionAsync(Drive, path, Process, ct))));
        }
    }
}
