using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class UnregisterCloudRecallJobTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Unregister-CloudRecallJob");
        Contract.Parameters(cmdlet, "Drive", "Name");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Name", true);
        Contract.ByPropertyName(cmdlet, "Name");
        Contract.Wildcards(cmdlet, "Name");
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Unregister-CloudRecallJob -Drive finance -Name prewarm -Confirm:$false", "UnregisterCloudRecallJobCommand");

    [Fact]
    public void WhatIf_with_a_literal_name_sends_nothing() =>
        AssertNothingFailed("Unregister-CloudRecallJob -Drive finance -Name prewarm -WhatIf");

    [Fact]
    public void WhatIf_with_a_wildcard_must_ask_the_service_which_jobs_match() =>
        AssertServiceNotRunning("Unregister-CloudRecallJob -Drive finance -Name pre* -WhatIf", "UnregisterCloudRecallJobCommand");

    [Fact]
    public void A_job_from_Get_CloudRecallJob_binds_by_Drive_and_Name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Name = 'prewarm' } | Unregister-CloudRecallJob -Confirm:$false", "UnregisterCloudRecallJobCommand");

    [Fact]
    public void Each_help_example_of_the_recall_job_cmdlets_runs_as_far_as_the_stopped_service()
    {
        var maml = System.Xml.Linq.XDocument.Load(RepoRoot.Combine("module", "en-US", "GeoDrive.Commands.dll-Help.xml"));
        System.Xml.Linq.XNamespace command = "http://schemas.microsoft.com/maml/dev/command/2004/10";
        System.Xml.Linq.XNamespace dev = "http://schemas.microsoft.com/maml/dev/2004/10";
        var examples = maml.Descendants(command + "command")
            .Where(c => c.Element(command + "details")!.Element(command + "name")!.Value.EndsWith("-CloudRecallJob", StringComparison.Ordinal))
            .SelectMany(c => c.Descendants(command + "example").Select(e => e.Element(dev + "code")!.Value))
            .ToList();
        Assert.Equal(8, examples.Count);
        foreach (var example in examples)
        {
            // Format-List is in Microsoft.PowerShell.Utility, which this runspace does not have: run what feeds it.
            var code = example.Contains("| Format-List", StringComparison.Ordinal) ? example[..example.IndexOf("| Format-List", StringComparison.Ordinal)] : example;
            var errors = new List<ErrorRecord>();
            try
            {
                Session.Invoke(code);
                errors.AddRange(Session.LastErrors);
            }
            catch (RuntimeException ex)
            {
                errors.Add(ex.ErrorRecord);
            }
            // -WhatIf examples send nothing; the others get as far as the service, so their parameters bound.
            Assert.True(code.Contains("-WhatIf", StringComparison.Ordinal) ? errors.Count == 0 : errors.All(e => e.FullyQualifiedErrorId.StartsWith("ServiceNotRunning,", StringComparison.Ordinal)) && errors.Count > 0,
                $"{code}: {string.Join("; ", errors.Select(e => e.FullyQualifiedErrorId))}");
        }
    }
}
