using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// What a test class that mounts drives needs: one mount folder, and a cleanup stack that unmounts and
/// disposes what the test made, newest first, before the folder goes.
/// </summary>
public abstract class MountedDriveTests : IAsyncLifetime
{
    private readonly TempDirectory _mountFolder = new("mnt");

    protected CleanupStack Cleanup { get; } = new();

    protected string MountFolder => _mountFolder.Path;

    /// <summary>Mounts the drive on the class's mount folder; unmounted when the test ends.</summary>
    protected FuseMountedDrive Mount(IDriveFileSystem drive, FuseMountOptions? options = null) =>
        Cleanup.Push(new FuseMountedDrive(drive, _mountFolder.Path, options));

    public virtual Task InitializeAsync() => Task.CompletedTask;

    public virtual async Task DisposeAsync()
    {
        await Cleanup.DisposeAsync();
        _mountFolder.Dispose();
    }
}
