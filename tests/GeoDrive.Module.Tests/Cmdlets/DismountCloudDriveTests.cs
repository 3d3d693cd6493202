namespace GeoDrive.Module.Tests;

/// <summary>Dismount-CloudDrive: the DriveStateCmdlet contract (DriveStateCmdletTests).</summary>
public sealed class DismountCloudDriveTests(ModuleSession session) : DriveStateCmdletTests(session, "Dismount-CloudDrive");
