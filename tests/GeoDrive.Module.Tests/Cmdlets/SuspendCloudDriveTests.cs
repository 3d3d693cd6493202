namespace GeoDrive.Module.Tests;

/// <summary>Suspend-CloudDrive: the DriveStateCmdlet contract (DriveStateCmdletTests).</summary>
public sealed class SuspendCloudDriveTests(ModuleSession session) : DriveStateCmdletTests(session, "Suspend-CloudDrive");
