using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class InvokeCloudRecallTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Invoke-CloudRecall");
        Contract.Parameters(cmdlet, "Drive", "Path", "LiteralPath", "Recurse", "ThrottleLimit");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.Mandatory(cmdlet, "Path", true, "Path");
        Contract.ByPropertyName(cmdlet, "Path", "Path");
        Contract.Wildcards(cmdlet, "Path");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Low);
        Contract.Outputs(cmdlet, "GeoDrive.Commands.CloudRecallResult");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Invoke-CloudRecall -Drive finance -Path Active -Recurse", "InvokeCloudRecallCommand");

    [Fact]
    public void A_throttle_limit_out_of_range_is_refused_before_anything_is_sent()
    {
        var error = Session.InvokeExpectingError("Invoke-CloudRecall -Drive finance -Path Active -ThrottleLimit 0");
        Assert.Equal("ParameterArgumentValidationError,GeoDrive.Commands.InvokeCloudRecallCommand", error.FullyQualifiedErrorId);
    }

    [Theory]
    [InlineData("-Path Active -Recurse")]
    [InlineData("-LiteralPath 'Active[1]' -Recurse")]
    public void Recurse_syncs_a_folder_named_without_wildcards_before_it_looks_for_stubs(string how)
    {
        var error = Session.InvokeExpectingError($"Invoke-CloudRecall -Drive finance {how} -Verbose");

        // The sync went first to the (stopped) service, and that ended the command.
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.InvokeCloudRecallCommand", error.FullyQualifiedErrorId);
        var announced = Assert.Single(Session.LastVerbose).Message;
        Assert.Contains("Sync with the bucket", announced, StringComparison.Ordinal);
        Assert.Contains("on drive finance", announced, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("-Path Active")]
    [InlineData("-Path 'Act*' -Recurse")]
    [InlineData("-Path Active -Recurse -WhatIf")]
    public void Without_Recurse_with_a_pattern_or_with_WhatIf_nothing_is_synced(string how)
    {
        var error = Session.InvokeExpectingError($"Invoke-CloudRecall -Drive finance {how} -Verbose");

        // What failed is the listing of stubs; no sync was announced before it.
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.InvokeCloudRecallCommand", error.FullyQualifiedErrorId);
        Assert.DoesNotContain(Session.LastVerbose, v => v.Message.Contains("Sync with the bucket", StringComparison.Ordinal));
    }

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'report.pdf' } | Invoke-CloudRecall", "InvokeCloudRecallCommand");
}
