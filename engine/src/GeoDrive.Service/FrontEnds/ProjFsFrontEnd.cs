using System.Runtime.Versioning;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.ProjFS;
using GeoDrive.Mount.ProjFS.Projection;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.FrontEnds;

/// <summary>
/// Windows: the drive's cache folder as a ProjFS virtualization root. The index is projected (so a
/// dehydrated file still lists), recalls are hydrations through <see cref="IndexHydrationGate"/>, and
/// the engine stubs by dehydrating through the mount. The engine's state is kept in the service's
/// home, outside the root, so applications never see it.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class ProjFsFrontEnd(string homePath) : IDriveFrontEnd
{
    public FrontEndKind Kind => FrontEndKind.ProjFS;

    public bool ServesCacheInPlace => true;

    public string StatePath(DriveDefinition definition) => DriveFrontEnds.StateOutsideCache(homePath, definition.Name);

    /// <summary>
    /// Until the root is served, the engine may not stub: its default (a sparse file) would be a full
    /// file of zeros to ProjFS, read as the file's data. Refused stubs stay Cached (the engine rolls back).
    /// </summary>
    public void Prepare(FrontEndContext drive) => drive.Engine.LocalStubs = NoStubsWhileDismounted.Instance;

    public IDriveMount Mount(FrontEndContext drive)
    {
        var engine = drive.Engine;
        var projection = new FileEntryProjection(IndexProjection.FilesUnder(drive.Index), engine.IsInternalPath);
        var mount = ProjFsMount.Mount(engine, projection, new IndexHydrationGate(engine, drive.Index), new ProjFsMountOptions
        {
            DriveName = drive.Definition.Name,
            StatePath = drive.StatePath,
            Logger = drive.Logger,
        });
        engine.LocalStubs = mount;
        return new Mounted(mount, engine);
    }

    private sealed class Mounted(ProjFsMount mount, Engine.Drives.DriveEngine engine) : IDriveMount
    {
        public void Unmount()
        {
            engine.LocalStubs = NoStubsWhileDismounted.Instance;
            mount.Dispose();
        }
    }
}
