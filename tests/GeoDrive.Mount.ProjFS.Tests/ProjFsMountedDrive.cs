using System.Runtime.Versioning;
using GeoDrive.Conformance;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Mount.ProjFS.Projection;
using GeoDrive.Policies.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>A real ProjFS virtualization root over a test drive's cache folder (Windows only).</summary>
[SupportedOSPlatform("windows")]
public sealed class ProjFsMountedDrive : IMountedDrive
{
    private readonly DriveRig _rig;
    private readonly ProjFsMount _mount;

    public ProjFsMountedDrive(DriveRig rig, IDriveFileSystem drive)
    {
        _rig = rig;
        var projection = new FileEntryProjection(
            folder => rig.Engine.FindFiles(folder.Length == 0 ? "**" : folder + "/**"),
            drive.IsInternalPath);
        _mount = ProjFsMount.Mount(drive, projection, new RigHydrationGate(rig), new ProjFsMountOptions { DriveName = "test", ChunkSize = 1024 * 1024, ReportOwnProcess = true, StatePath = rig.StatePath });
        rig.Engine.LocalStubs = _mount;
    }

    public string Root => _mount.Root;

    public ProjFsMount Mount => _mount;

    /// <summary>
    /// The tests are applications in the mount's own process, so their activity reaches the engine
    /// through the mount's queue (ReportOwnProcess); wait (bounded) until it is empty and no handle is open.
    /// </summary>
    public async Task WaitForClosesAsync()
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (_mount.OpenFileCount > 0 || _mount.PendingCount > 0 || _mount.QueuedCount > 0)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{_mount.OpenFileCount} file(s) still open through ProjFS after 10 s");
            }
            await Task.Delay(5);
        }
    }

    public ValueTask DisposeAsync()
    {
        _rig.Engine.LocalStubs = new SparseFileStubs(_rig.CachePath);
        _mount.Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// The rig's gate: the process rule from the drive's policy, and "hydrated" recorded in the index as
    /// the engine's recall would (the Service's IndexHydrationGate does the same over its own index; this
    /// project may not reference the Service).
    /// </summary>
    private sealed class RigHydrationGate(DriveRig rig) : IHydrationGate
    {
        public ValueTask<OpenDecision> DecideRecallAsync(string path, Caller caller, CancellationToken cancellationToken = default) =>
            ValueTask.FromResult(rig.Engine.TreatmentFor(caller).Recall switch
            {
                RecallAction.Stream => OpenDecision.Stream,
                RecallAction.Deny => OpenDecision.Deny,
                _ => OpenDecision.Local,
            });

        public void Hydrated(string path, Caller caller)
        {
            if (rig.Index.Get(path) is { State: FileState.Stubbed } entry)
            {
                entry.State = FileState.Cached;
                rig.Index.Put(entry);
            }
        }
    }
}
