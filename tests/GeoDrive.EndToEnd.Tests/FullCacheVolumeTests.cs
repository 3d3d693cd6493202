using System.Diagnostics;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The service with a drive whose cache (and index) is on a real, small loop-mounted volume that applications fill
/// through the mount faster than anything can go up (uploads wait an hour): writes get ENOSPC, the drive still
/// answers Get-CloudDriveStatus, and SIGTERM stops the service promptly with every acknowledged file intact.
/// (FullDiskTests shows the drive freeing space by itself once files are uploaded.)
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class FullCacheVolumeTests(S3ServerFixture s3) : ServiceTests
{
    private const int MiB = 1024 * 1024;

    [Fact]
    public async Task A_cache_volume_filled_through_the_mount_leaves_the_drive_answering_and_stopping_within_seconds_with_nothing_lost()
    {
        using var volume = new LoopVolume(64);
        using var d = new DriveScenario(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: full-volume }
            spec:
              stubbing: { enabled: true, accessWait: 30d }
              cacheThresholds: { stubAbove: 70%, stubUntil: 40% }
              upload: { settle: 1h }
            """);
        var variables = d.Variables();
        var cache = Path.Combine(volume.MountPath, "cache");
        variables["cache"] = cache;
        Ps.Invoke(DriveScenario.NewDriveScript, variables);
        Assert.Empty(Ps.LastErrors);

        var written = new Dictionary<string, byte[]>();
        IOException? full = null;
        for (var i = 0; i < 40 && full is null; i++)
        {
            var bytes = DriveRig.RandomBytes(2 * MiB, 300 + i);
            try
            {
                await File.WriteAllBytesAsync(d.Mounted($"scan{i:00}.bin"), bytes);
                written[$"scan{i:00}.bin"] = bytes;
            }
            catch (IOException ex)
            {
                full = ex;
            }
        }
        Assert.NotNull(full);
        Assert.Contains("No space left", full.Message, StringComparison.Ordinal);

        // The drive still answers (its index kept room for itself) and still records what is written.
        var status = Ps.Invoke("Get-CloudDriveStatus -Name $name", variables);
        Assert.Empty(Ps.LastErrors);
        Assert.Single(status);
        var known = Ps.Invoke("Get-CloudFile -Drive $name -Path '*.bin' | ForEach-Object Path", variables).Select(p => p.ToString()).ToHashSet();
        Assert.Subset(known, written.Keys.ToHashSet());

        var stopping = Stopwatch.StartNew();
        await Service.StopAsync();
        Assert.True(stopping.Elapsed < TimeSpan.FromSeconds(30), $"SIGTERM took {stopping.Elapsed.TotalSeconds:0.#} s to stop the service");

        foreach (var (path, bytes) in written)
        {
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(cache, path)));
        }
    }
}
