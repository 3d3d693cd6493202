using GeoDrive.Engine.Drives;
using GeoDrive.Mount.Fuse;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.FrontEnds;

/// <summary>Linux: a FUSE mount at the drive's mount folder; the engine's state stays in "&lt;cache&gt;/.geodrive", hidden by the mount.</summary>
public sealed class FuseFrontEnd : IDriveFrontEnd
{
    public FrontEndKind Kind => FrontEndKind.Fuse;

    public bool ServesCacheInPlace => false;

    public string StatePath(DriveDefinition definition) => Path.Combine(definition.CachePath, DriveEngineOptions.InternalFolder);

    /// <summary>Nothing to do: the engine's default stubs (sparse files in the cache) are the FUSE ones.</summary>
    public void Prepare(FrontEndContext drive)
    {
    }

    public IDriveMount Mount(FrontEndContext drive) =>
        new Mounted(FuseMount.Mount(drive.Definition.MountPath, drive.Engine, new FuseMountOptions { DriveName = drive.Definition.Name, Logger = drive.Logger }));

    private sealed class Mounted(FuseMount mount) : IDriveMount
    {
        public void Unmount() => mount.Unmount();
    }
}
