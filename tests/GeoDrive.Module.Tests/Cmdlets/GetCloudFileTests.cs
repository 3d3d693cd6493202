namespace GeoDrive.Module.Tests;

public sealed class GetCloudFileTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudFile");
        Contract.Parameters(cmdlet, "Drive", "Path", "LiteralPath");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", false, "Path");
        Assert.Equal(0, Contract.Parameter(cmdlet, "Path", "Path").Position);
        Contract.Wildcards(cmdlet, "Path");
        Contract.Mandatory(cmdlet, "LiteralPath", true, "LiteralPath");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Assert.Equal("Path", cmdlet.DefaultParameterSet);
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.CloudFileInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudFile -Drive finance -Path 'reports/**'", "GetCloudFileCommand");

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_to_Drive_through_its_Name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Get-CloudFile", "GetCloudFileCommand");

    [Fact]
    public void LiteralPath_also_needs_the_service() =>
        AssertServiceNotRunning("Get-CloudFile -Drive finance -LiteralPath 'a[1].txt'", "GetCloudFileCommand");
}
