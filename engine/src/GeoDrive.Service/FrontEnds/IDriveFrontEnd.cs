using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.FrontEnds;

/// <summary>Which file-system front end serves the drives of this service.</summary>
public enum FrontEndKind
{
    /// <summary>Linux: FUSE 3 over the cache folder, at a separate mount folder.</summary>
    Fuse,

    /// <summary>Windows: Projected File System; the cache folder itself is the virtualization root.</summary>
    ProjFS,
}

/// <summary>What a front end needs from a running drive to serve it.</summary>
public sealed record FrontEndContext(DriveDefinition Definition, DriveEngine Engine, IFileIndex Index, string StatePath, ILogger Logger);

/// <summary>A started front end; <see cref="Unmount"/> stops serving the drive.</summary>
public interface IDriveMount
{
    void Unmount();
}

/// <summary>
/// The OS's file-system front end, chosen once at start-up (Program.cs, DriveFrontEnds.ForThisMachine)
/// so that the rest of the service never asks which OS it runs on.
/// </summary>
public interface IDriveFrontEnd
{
    FrontEndKind Kind { get; }

    /// <summary>
    /// True when applications use the cache folder itself (ProjFS): a drive then has no separate
    /// mount folder, and the engine's state is kept outside the cache.
    /// </summary>
    bool ServesCacheInPlace { get; }

    /// <summary>Where the engine keeps its index and other files for this drive.</summary>
    string StatePath(DriveDefinition definition);

    /// <summary>Once, when the drive's engine exists and before it is mounted (ProjFS: no stubs while the root is not served).</summary>
    void Prepare(FrontEndContext drive);

    IDriveMount Mount(FrontEndContext drive);
}

/// <summary>The choice of front end: plain code, so the rule is tested on every OS.</summary>
public static class DriveFrontEnds
{
    public static FrontEndKind Choose(bool windows) => windows ? FrontEndKind.ProjFS : FrontEndKind.Fuse;

    /// <summary>The front end for <paramref name="kind"/>; <paramref name="homePath"/> is the service's home (state of ProjFS drives).</summary>
    public static IDriveFrontEnd Create(FrontEndKind kind, string homePath) => kind switch
    {
        FrontEndKind.ProjFS when OperatingSystem.IsWindows() => new ProjFsFrontEnd(homePath),
        FrontEndKind.ProjFS => throw new PlatformNotSupportedException("Projected File System exists only on Windows."),
        _ => new FuseFrontEnd(),
    };

    public static IDriveFrontEnd ForThisMachine(string homePath) => Create(Choose(OperatingSystem.IsWindows()), homePath);

    /// <summary>The engine's state folder of a drive served in place: "&lt;home&gt;/drives/&lt;name&gt;", outside every cache.</summary>
    public static string StateOutsideCache(string homePath, string driveName) => Path.Combine(homePath, "drives", driveName);
}
