using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class SuspendCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Suspend-CloudDrive");
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
        AssertServiceNotRunning("Suspend-CloudDrive -Name finance", "SuspendCloudDriveCommand");

    [Fact]
    public void WhatIf_with_a_literal_name_sends_nothing() =>
        AssertNothingFailed("Suspend-CloudDrive -Name finance -WhatIf");

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_Name_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Suspend-CloudDrive -Confirm:$false", "SuspendCloudDriveCommand");
}
