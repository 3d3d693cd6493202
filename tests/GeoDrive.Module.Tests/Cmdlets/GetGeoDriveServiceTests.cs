namespace GeoDrive.Module.Tests;

public sealed class GetGeoDriveServiceTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-GeoDriveService");
        Contract.Parameters(cmdlet);
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.ServiceInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-GeoDriveService", "GetGeoDriveServiceCommand");

    [Fact]
    public void ErrorAction_SilentlyContinue_turns_it_into_a_quiet_test()
    {
        var output = Session.Invoke("[bool](Get-GeoDriveService -ErrorAction SilentlyContinue)");
        Assert.False((bool)output.Single().BaseObject);
    }
}
