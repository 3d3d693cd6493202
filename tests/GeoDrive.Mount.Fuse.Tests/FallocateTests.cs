using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// fallocate(2) through the mount, with util-linux's fallocate as an administrator would run it (disk images, downloaders and
/// rsync --preallocate call it too): reserved space grows the file with zeros, a punched hole reads as zeros, a reservation
/// that keeps the size changes nothing, and what the file then holds is what goes up. Without it the mount answered
/// EOPNOTSUPP.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class FallocateTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int MiB = 1 << 20;

    private (DriveRig Rig, FuseMountedDrive Mounted) MountedRig()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: fallocate-tests }
            spec:
              upload: { settle: 1h }
            """));
        return (rig, Mount(rig.Engine));
    }

    [Fact]
    public async Task Space_reserved_and_a_hole_punched_through_the_mount_are_what_the_file_holds_and_what_goes_up()
    {
        var (rig, mounted) = MountedRig();
        var path = Path.Combine(mounted.Root, "disk.img");
        var content = DriveRig.RandomBytes(64 << 10, 41);
        await File.WriteAllBytesAsync(path, content);

        Command.Output("fallocate", "--length", "1MiB", path);
        Command.Output("fallocate", "--punch-hole", "--offset", "4096", "--length", "8192", path);
        Command.Output("fallocate", "--keep-size", "--length", "4MiB", path);
        await mounted.WaitForClosesAsync();

        var expected = new byte[MiB];
        content.CopyTo(expected, 0);
        Array.Clear(expected, 4096, 8192);
        Assert.Equal(expected, await File.ReadAllBytesAsync(path));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("disk.img")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("disk.img"));
    }

    [Fact]
    public async Task A_stub_grown_by_fallocate_is_recalled_first_and_keeps_its_bytes_before_the_new_zeros()
    {
        var (rig, mounted) = MountedRig();
        var path = Path.Combine(mounted.Root, "archive.bin");
        var content = DriveRig.RandomBytes(300_000, 42);
        await File.WriteAllBytesAsync(path, content);
        await mounted.WaitForClosesAsync();
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("archive.bin")).State);
        Assert.Equal(FileState.Stubbed, (await rig.Engine.StubAsync("archive.bin")).State);

        Command.Output("fallocate", "--length", "2MiB", path);
        await mounted.WaitForClosesAsync();

        var expected = new byte[2 * MiB];
        content.CopyTo(expected, 0);
        Assert.Equal(expected, await File.ReadAllBytesAsync(path));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("archive.bin")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("archive.bin"));
    }
}
