using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class SyncCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Sync-CloudDrive");
        Contract.Parameters(cmdlet, "Drive", "Path");
        Contract.Mandatory(cmdlet, "Drive", true);
        Assert.Equal(0, Contract.Parameter(cmdlet, "Drive").Position);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Type(cmdlet, "Drive", typeof(string));
        Contract.Mandatory(cmdlet, "Path", false);
        Contract.Type(cmdlet, "Path", typeof(string));
        // A file from Get-CloudFile has a Path: it must not narrow the sync of its drive to a file.
        Assert.False(Contract.Parameter(cmdlet, "Path").ValueFromPipelineByPropertyName);
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Low);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveSyncInfo");
    }

    [Theory]
    [InlineData("Sync-CloudDrive finance")]
    [InlineData("Sync-CloudDrive -Drive finance -Path reports/2025")]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it(string script) =>
        AssertServiceNotRunning(script, "SyncCloudDriveCommand");

    [Theory]
    [InlineData("Sync-CloudDrive -Drive finance -WhatIf")]
    [InlineData("Sync-CloudDrive -Drive finance -Path reports -WhatIf")]
    [InlineData("[pscustomobject]@{ Name = 'finance' }, [pscustomobject]@{ Name = 'sales' } | Sync-CloudDrive -WhatIf")]
    public void WhatIf_sends_nothing(string script) => AssertNothingFailed(script);

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_by_its_Name()
    {
        // As `Get-CloudDrive | Sync-CloudDrive`: a DriveInfo has Name (and CachePath, MountPath …) but no Drive.
        var error = Session.InvokeExpectingError("""
            [GeoDrive.Api.DriveInfo]@{ Name = 'finance'; CachePath = '/srv/finance'; MountPath = '/mnt/finance'; Endpoint = 'http://s3'; Bucket = 'finance' } |
                Sync-CloudDrive -Verbose
            """);

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.SyncCloudDriveCommand", error.FullyQualifiedErrorId);
        var announced = Assert.Single(Session.LastVerbose).Message;
        Assert.Contains("Sync with the bucket", announced, StringComparison.Ordinal);
        Assert.Contains("\"drive finance\"", announced, StringComparison.Ordinal);
    }

    [Fact]
    public void A_path_names_the_folder_in_the_drive_s_terms()
    {
        var error = Session.InvokeExpectingError(@"Sync-CloudDrive finance -Path '\reports\2025\' -Verbose");

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.SyncCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains("\"reports/2025 on drive finance\"", Assert.Single(Session.LastVerbose).Message, StringComparison.Ordinal);
    }
}
