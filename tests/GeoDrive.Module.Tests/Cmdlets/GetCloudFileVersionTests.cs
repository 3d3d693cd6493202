namespace GeoDrive.Module.Tests;

public sealed class GetCloudFileVersionTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudFileVersion");
        Contract.Parameters(cmdlet, "Drive", "Path");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", true);
        Contract.ByPropertyName(cmdlet, "Path");
        Assert.Equal(0, Contract.Parameter(cmdlet, "Path").Position);
        Contract.Type(cmdlet, "Path", typeof(string[]));
        // A deleted file is listed nowhere a pattern could be expanded against: paths are literal.
        Assert.DoesNotContain(cmdlet.Parameters["Path"].Attributes, a => a is System.Management.Automation.SupportsWildcardsAttribute);
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.CloudFileVersionInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudFileVersion -Drive finance -Path reports/budget.xlsx", "GetCloudFileVersionCommand");

    [Fact]
    public void A_file_from_Get_CloudFile_binds_Drive_and_Path_by_property_name()
    {
        // What Get-CloudFile writes: a GeoDrive.Api.CloudFileInfo with Drive and Path.
        var error = Session.InvokeExpectingError("[GeoDrive.Api.CloudFileInfo]@{ Drive = 'finance'; Path = 'reports/budget.xlsx'; State = 'Cached' } | Get-CloudFileVersion");
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.GetCloudFileVersionCommand", error.FullyQualifiedErrorId);
        Assert.Equal("reports/budget.xlsx", error.TargetObject?.ToString());
    }

    [Fact]
    public void A_path_by_position_is_enough() =>
        AssertServiceNotRunning("Get-CloudFileVersion reports/budget.xlsx -Drive finance", "GetCloudFileVersionCommand");
}
