namespace GeoDrive.Module.Tests;

public sealed class GetCloudPolicyDecisionTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudPolicyDecision");
        Contract.Parameters(cmdlet, "Drive", "Path", "Process");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", true);
        Assert.Equal(0, Contract.Parameter(cmdlet, "Path").Position);
        Contract.ByPropertyName(cmdlet, "Path");
        Contract.Type(cmdlet, "Path", typeof(string[]));
        Contract.Mandatory(cmdlet, "Process", false);
        Contract.Type(cmdlet, "Process", typeof(string));
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.PolicyDecisionInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudPolicyDecision -Drive finance -Path Active/plan.xlsx -Process backup-agent", "GetCloudPolicyDecisionCommand");

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'Active/plan.xlsx' } | Get-CloudPolicyDecision", "GetCloudPolicyDecisionCommand");

    [Fact]
    public void An_empty_process_name_is_refused_before_anything_is_sent()
    {
        var error = Session.InvokeExpectingError("Get-CloudPolicyDecision -Drive finance -Path a.txt -Process ''");
        Assert.Equal("ParameterArgumentValidationError,GeoDrive.Commands.GetCloudPolicyDecisionCommand", error.FullyQualifiedErrorId);
    }
}
