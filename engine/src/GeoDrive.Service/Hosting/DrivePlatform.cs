using GeoDrive.Core.Model;
using GeoDrive.Service.Drives;
using GeoDrive.Service.FrontEnds;

namespace GeoDrive.Service.Hosting;

/// <summary>A drive's FilesNotToBackup entry (Windows); kept in step with the drive's definition.</summary>
public interface IBackupExclusions
{
    void Apply(DriveDefinition definition);

    void Remove(string driveName);
}

/// <summary>
/// What differs between Linux and Windows for the drives, chosen once at start-up (Program.cs) and
/// handed to every drive: the file-system front end, where drive events go besides the drive's own
/// event list, and the backup exclusion.
/// </summary>
public sealed class DrivePlatform
{
    public required IDriveFrontEnd FrontEnd { get; init; }

    /// <summary>Each recorded drive event with its drive's name (Windows: the Event Log). Null: none.</summary>
    public Action<string, DriveEvent>? DriveEvents { get; init; }

    /// <summary>Null where the OS has no such thing (Linux).</summary>
    public IBackupExclusions? Backup { get; init; }

    /// <summary>Linux: FUSE, the console log (journald) only, no backup registry.</summary>
    public static DrivePlatform Fuse() => new() { FrontEnd = new FuseFrontEnd() };
}
