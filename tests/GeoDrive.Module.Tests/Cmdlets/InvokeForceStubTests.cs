using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class InvokeForceStubTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Invoke-ForceStub");
        Contract.Parameters(cmdlet, "Drive", "Path", "LiteralPath", "PassThru", "Force");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", true, "Path");
        Contract.ByPropertyName(cmdlet, "Path", "Path");
        Contract.Wildcards(cmdlet, "Path");
        Contract.Mandatory(cmdlet, "LiteralPath", true, "LiteralPath");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.FileActionResult");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Invoke-ForceStub -Drive finance -Path report.pdf -Confirm:$false", "InvokeForceStubCommand");

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'report.pdf' } | Invoke-ForceStub -Confirm:$false", "InvokeForceStubCommand");

    [Fact]
    public void WhatIf_sends_nothing() =>
        AssertNothingFailed("Invoke-ForceStub -Drive finance -Path report.pdf -WhatIf");

    [Fact]
    public void WhatIf_with_a_pattern_sends_nothing_either() =>
        AssertNothingFailed("Invoke-ForceStub -Drive finance -Path '**/*.iso' -WhatIf");

    [Fact]
    public void A_pattern_with_Force_is_not_asked_about_and_goes_to_the_service() =>
        AssertServiceNotRunning("Invoke-ForceStub -Drive finance -Path '**/*.iso' -Force", "InvokeForceStubCommand");
}
