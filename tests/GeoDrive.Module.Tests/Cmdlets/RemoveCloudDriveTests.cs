using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class RemoveCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Remove-CloudDrive");
        Contract.Parameters(cmdlet, "Name", "Force");
        Contract.Mandatory(cmdlet, "Name", true);
        Contract.ByPropertyName(cmdlet, "Name");
        Contract.Wildcards(cmdlet, "Name");
        Contract.CompletesDriveNames(cmdlet, "Name");
        Contract.Type(cmdlet, "Force", typeof(SwitchParameter));
        Contract.ShouldProcess(cmdlet, ConfirmImpact.High);
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Remove-CloudDrive -Name finance -Force", "RemoveCloudDriveCommand");

    [Fact]
    public void WhatIf_with_a_literal_name_sends_nothing() =>
        AssertNothingFailed("Remove-CloudDrive -Name finance -WhatIf");

    [Fact]
    public void WhatIf_still_wins_over_Force() =>
        AssertNothingFailed("Remove-CloudDrive -Name finance -Force -WhatIf");

    [Fact]
    public void WhatIf_with_a_wildcard_must_ask_the_service_which_drives_match() =>
        AssertServiceNotRunning("Remove-CloudDrive -Name fin* -WhatIf", "RemoveCloudDriveCommand");

    [Fact]
    public void A_drive_piped_in_binds_by_its_Name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Remove-CloudDrive -Confirm:$false", "RemoveCloudDriveCommand");
}
