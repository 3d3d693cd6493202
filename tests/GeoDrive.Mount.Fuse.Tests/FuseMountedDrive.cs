using GeoDrive.Conformance;
using GeoDrive.Core.Ports;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>A real FUSE mount of a drive in a temp folder.</summary>
public sealed class FuseMountedDrive : IMountedDrive
{
    private readonly FuseMount _mount;

    public FuseMountedDrive(IDriveFileSystem drive, string mountPath, FuseMountOptions? options = null)
    {
        _mount = FuseMount.Mount(mountPath, drive, options ?? new FuseMountOptions { DriveName = "test" });
    }

    public string Root => _mount.MountPath;

    public FuseMount Mount => _mount;

    /// <summary>The kernel sends FUSE's release after close() returned; wait (bounded) until none is outstanding.</summary>
    public async Task WaitForClosesAsync()
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (_mount.OpenHandleCount > 0)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{_mount.OpenHandleCount} handle(s) still open through the mount after 10 s");
            }
            await Task.Delay(5);
        }
    }

    public ValueTask DisposeAsync()
    {
        _mount.Unmount();
        return ValueTask.CompletedTask;
    }
}
