namespace GeoDrive.Module.Tests;

/// <summary>Mount-CloudDrive: the DriveStateCmdlet contract (DriveStateCmdletTests).</summary>
public sealed class MountCloudDriveTests(ModuleSession session) : DriveStateCmdletTests(session, "Mount-CloudDrive");
