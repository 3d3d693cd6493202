using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class InvokeForceUploadTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Invoke-ForceUpload");
        Contract.Parameters(cmdlet, "Drive", "Path", "LiteralPath", "PassThru");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.Mandatory(cmdlet, "Path", true, "Path");
        Contract.ByPropertyName(cmdlet, "Path", "Path");
        Contract.Wildcards(cmdlet, "Path");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Low);
        Contract.Outputs(cmdlet, "GeoDrive.Api.FileActionResult");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Invoke-ForceUpload -Drive finance -Path 'Active/**'", "InvokeForceUploadCommand");

    [Fact]
    public void WhatIf_sends_nothing() =>
        AssertNothingFailed("Invoke-ForceUpload -Drive finance -LiteralPath 'a[1].txt' -WhatIf");

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'report.pdf' } | Invoke-ForceUpload", "InvokeForceUploadCommand");
}
