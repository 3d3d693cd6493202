using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class StopGeoDriveServiceTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Stop-GeoDriveService");
        Contract.Parameters(cmdlet, "TimeoutSeconds");
        Contract.Mandatory(cmdlet, "TimeoutSeconds", false);
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Stop-GeoDriveService -Confirm:$false", "StopGeoDriveServiceCommand");
}
