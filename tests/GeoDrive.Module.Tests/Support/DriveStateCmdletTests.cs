using System.Management.Automation;

namespace GeoDrive.Module.Tests;

/// <summary>
/// What every cmdlet on the DriveStateCmdlet base shares (Mount, Dismount, Suspend, Resume): -Name
/// with wildcards from the pipeline, -PassThru, ShouldProcess, and no call to the service under -WhatIf.
/// Each cmdlet keeps its own test class deriving from this one.
/// </summary>
public abstract class DriveStateCmdletTests(ModuleSession session, string command) : CmdletTests(session)
{
    private string ClassName => command.Replace("-", "", StringComparison.Ordinal) + "Command";

    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command(command);
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
        AssertServiceNotRunning($"{command} -Name finance", ClassName);

    [Fact]
    public void WhatIf_with_a_literal_name_sends_nothing() =>
        AssertNothingFailed($"{command} -Name finance -WhatIf");

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_Name_by_property_name() =>
        AssertServiceNotRunning($"[pscustomobject]@{{ Name = 'finance' }} | {command} -Confirm:$false", ClassName);
}
