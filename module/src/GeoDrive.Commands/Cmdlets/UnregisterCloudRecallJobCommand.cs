using System.Management.Automation;

namespace GeoDrive.Commands;

/// <summary>
/// Removes recall jobs made by Register-CloudRecallJob (their history goes with them). Jobs declared
/// in a policy are refused: remove them from the policy file instead.
/// </summary>
[Cmdlet(VerbsLifecycle.Unregister, "CloudRecallJob", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(void))]
public sealed class UnregisterCloudRecallJobCommand : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>Job names (wildcards); a job from Get-CloudRecallJob binds by its Drive and Name.</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Name { get; set; } = [];

    #endregion

    protected override void ProcessRecord()
    {
        Try(Name, () =>
        {
            foreach (var name in ExpandJobNames())
            {
                if (ShouldProcess($"recall job '{name}' on drive {Drive}", "Unregister"))
                {
                    Try(name, () => Call((c, ct) => c.UnregisterRecallJobAsync(Drive, name, ct)));
                }
            }
        });
    }

    /// <summary>Literal names as typed (so -WhatIf needs no service); patterns matched against the drive's registered jobs.</summary>
    private IEnumerable<string> ExpandJobNames()
    {
        Api.RecallJobInfo[]? all = null;
        foreach (var name in Name)
        {
            if (!Wildcards.IsPattern(name))
            {
                yield return name;
                continue;
            }
            all ??= Call((c, ct) => c.GetRecallJobsAsync(Drive, ct));
            var pattern = Wildcards.Name(name);
            // A pattern never picks policy jobs: they cannot be unregistered, and asking about each would be noise.
            foreach (var job in all.Where(j => j.Source == "Registered" && pattern.IsMatch(j.Name)))
            {
                yield return job.Name;
            }
        }
    }
}
