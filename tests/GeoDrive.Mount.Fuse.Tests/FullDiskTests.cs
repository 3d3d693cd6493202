using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// A full cache volume (a real, small loop-mounted ext4, the index on it too): applications get ENOSPC,
/// the drive frees space by stubbing and recovers by itself, and nothing acknowledged is lost.
/// </summary>
public sealed class FullDiskTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int MiB = 1024 * 1024;

    // Undone last-in first-out: the mount before its engine, the engine before the volume under its cache.
    private (DriveRig Rig, FuseMountedDrive Mounted) Mount(LoopVolume volume)
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: full-disk }
            spec:
              stubbing: { enabled: true, accessWait: 30d }
              cacheThresholds: { stubAbove: 70%, stubUntil: 40% }
              upload: { settle: 0s }
            """, Path.Combine(volume.MountPath, "cache")));
        var mounted = Mount(rig.Engine);
        return (rig, mounted);
    }

    [Fact]
    public async Task Writes_that_fill_the_volume_get_ENOSPC_and_once_stubbing_freed_space_the_drive_takes_new_files_and_lost_nothing()
    {
        var volume = Cleanup.Push(new LoopVolume(64));
        var (rig, mounted) = Mount(volume);
        var written = new Dictionary<string, byte[]>();
        IOException? full = null;
        for (var i = 0; i < 40 && full is null; i++)
        {
            var path = $"scans/scan{i:00}.bin";
            var bytes = DriveRig.RandomBytes(2 * MiB, 100 + i);
            Directory.CreateDirectory(Path.Combine(mounted.Root, "scans"));
            try
            {
                await File.WriteAllBytesAsync(Path.Combine(mounted.Root, path), bytes);
                written[path] = bytes;
            }
            catch (IOException ex)
            {
                full = ex;
            }
            await mounted.WaitForClosesAsync();
        }
        Assert.NotNull(full);
        Assert.Contains("No space left", full.Message, StringComparison.Ordinal);

        // The drive frees space by itself (uploads verified, then the least recently used stubbed).
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        await rig.Engine.TickAsync();

        Assert.True(new DriveInfo(volume.MountPath).AvailableFreeSpace >= 2 * CacheReserve.Bytes, "stubbing should have freed twice the drive's own reserve");
        var after = DriveRig.RandomBytes(2 * MiB, 999);
        await File.WriteAllBytesAsync(Path.Combine(mounted.Root, "after.bin"), after);
        await mounted.WaitForClosesAsync();
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal(after, await rig.ObjectBytesAsync("after.bin"));
        // A bulk read brings every file back: where the volume fills up, the application gets ENOSPC at once, and
        // its next try, after the drive stubbed what it read longest ago, gets the bytes.
        var refusedFull = 0;
        foreach (var (path, bytes) in written)
        {
            byte[] read;
            try
            {
                read = await File.ReadAllBytesAsync(Path.Combine(mounted.Root, path));
            }
            catch (IOException ex)
            {
                Assert.Contains("No space left", ex.Message, StringComparison.Ordinal);
                refusedFull++;
                await mounted.WaitForClosesAsync();
                await rig.Engine.TickAsync();
                read = await File.ReadAllBytesAsync(Path.Combine(mounted.Root, path));
            }
            await mounted.WaitForClosesAsync();
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
            Assert.Equal(bytes, read);
            Assert.Equal(bytes, await rig.ObjectBytesAsync(path));
        }
        Assert.True(refusedFull > 0, "the bulk read should have filled the volume at least once");
    }
}
