namespace GeoDrive.Module.Tests;

public sealed class GetCloudPolicyTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudPolicy");
        Contract.Parameters(cmdlet, "Drive", "Effective");
        Contract.Mandatory(cmdlet, "Drive", true);
        Assert.Equal(0, Contract.Parameter(cmdlet, "Drive").Position);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Type(cmdlet, "Effective", typeof(System.Management.Automation.SwitchParameter));
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.PolicyFileInfo");
        Contract.Outputs(cmdlet, "GeoDrive.Api.PolicySettingInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudPolicy -Drive finance", "GetCloudPolicyCommand");

    [Fact]
    public void Effective_also_asks_the_service() =>
        AssertServiceNotRunning("Get-CloudPolicy finance -Effective", "GetCloudPolicyCommand");

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_through_its_Name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Get-CloudPolicy", "GetCloudPolicyCommand");

    [Fact]
    public void An_empty_drive_name_is_refused_before_anything_is_sent()
    {
        var error = Session.InvokeExpectingError("Get-CloudPolicy -Drive ''");
        Assert.Equal("ParameterArgumentValidationError,GeoDrive.Commands.GetCloudPolicyCommand", error.FullyQualifiedErrorId);
    }
}
