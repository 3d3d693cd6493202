using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class ResumeCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Resume-CloudDrive");
        Contract.Parameters(cmdlet, "Name", "PassThru");
        Contract.Mandatory(cmdlet, "Name", true);
        Contract.ByPropertyName(cmdlet, "Name");
        Contract.Wildcards(cmdlet, "Name");
        Contract.CompletesDriveNames(cmdlet, "Name");
        Contract.Type(cmdlet, "PassThru", typeof(SwitchParameter));
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Resume-CloudDrive -Name finance", "ResumeCloudDriveCommand");

    [Fact]
    public void WhatIf_with_a_literal_name_sends_nothing() =>
        AssertNothingFailed("Resume-CloudDrive -Name finance -WhatIf");

    [Fact]
    public void A_drive_name_binds_from_the_pipeline() =>
        AssertServiceNotRunning("'finance' | Resume-CloudDrive -Confirm:$false", "ResumeCloudDriveCommand");
}
