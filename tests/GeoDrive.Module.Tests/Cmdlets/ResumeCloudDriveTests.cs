namespace GeoDrive.Module.Tests;

/// <summary>Resume-CloudDrive: the DriveStateCmdlet contract (DriveStateCmdletTests), and a bare name from the pipeline.</summary>
public sealed class ResumeCloudDriveTests(ModuleSession session) : DriveStateCmdletTests(session, "Resume-CloudDrive")
{
    [Fact]
    public void A_drive_name_binds_from_the_pipeline() =>
        AssertServiceNotRunning("'finance' | Resume-CloudDrive -Confirm:$false", "ResumeCloudDriveCommand");
}
