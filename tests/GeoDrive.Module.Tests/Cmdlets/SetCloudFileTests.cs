using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class SetCloudFileTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Set-CloudFile");
        Contract.Parameters(cmdlet, "Drive", "Path", "LiteralPath", "Pin", "Unpin", "PassThru");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", true, "Path");
        Contract.ByPropertyName(cmdlet, "Path", "Path");
        Contract.Wildcards(cmdlet, "Path");
        Contract.Mandatory(cmdlet, "LiteralPath", true, "LiteralPath");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Contract.Type(cmdlet, "Pin", typeof(SwitchParameter));
        Contract.Type(cmdlet, "Unpin", typeof(SwitchParameter));
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.CloudFileInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Set-CloudFile -Drive finance -Path 'Active/**' -Pin", "SetCloudFileCommand");

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'report.pdf' } | Set-CloudFile -Unpin", "SetCloudFileCommand");

    [Fact]
    public void WhatIf_sends_nothing() =>
        AssertNothingFailed("Set-CloudFile -Drive finance -LiteralPath 'a[1].pdf' -Pin -WhatIf");

    [Theory]
    [InlineData("")]
    [InlineData("-Pin -Unpin")]
    public void Exactly_one_of_Pin_and_Unpin_is_required(string switches)
    {
        var error = Session.InvokeExpectingError($"Set-CloudFile -Drive finance -Path report.pdf {switches}");
        Assert.Equal("PinOrUnpin,GeoDrive.Commands.SetCloudFileCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.InvalidArgument, error.CategoryInfo.Category);
    }
}
