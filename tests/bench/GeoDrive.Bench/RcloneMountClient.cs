using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text.Json;
using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;

namespace GeoDrive.Bench;

/// <summary>
/// The peer that does GeoDrive's own job: `rclone mount` with the full VFS cache, one mount per run of the run's
/// prefix, writes sent back as soon as a file is closed (--vfs-write-back 0s, as the bench gives GeoDrive settle 0s)
/// with the same transfers and multipart settings. Upload is timed until every object is in the bucket (rclone's
/// write-back queue empty and the prefix listing them all); restore is a cold read of every file through a mount
/// started after the files were put in the bucket, with an empty VFS cache.
/// </summary>
public sealed class RcloneMountClient(BenchSettings settings, string bucket) : IBenchClient
{
    private readonly Dictionary<string, Mount> _mounts = [];
    private readonly RcloneClient _seeder = new(settings, bucket);
    private readonly HttpClient _rc = new() { Timeout = TimeSpan.FromSeconds(30) };
    private readonly AmazonS3Client _s3 = new(new BasicAWSCredentials(settings.AccessKey, settings.SecretKey), new AmazonS3Config
    {
        ServiceURL = settings.Endpoint,
        ForcePathStyle = true,
        AuthenticationRegion = "us-east-1",
    });
    private double _cpuAtLastLook;
    private int _lastLooked;

    private sealed record Mount(Process Rclone, string Folder, string Root, int RcPort);

    public string Name => "rclone-mount";

    public async Task SeedAsync(string run, IReadOnlyList<string> files)
    {
        await _seeder.SeedAsync(run, files);
        // Mounted after the objects are there: its listings and its empty cache are cold.
        await MountAsync(run);
    }

    public async Task RunAsync(string run, IReadOnlyList<string> upload, IReadOnlyList<string> restore)
    {
        var mount = _mounts[run];
        await Task.WhenAll(MountedFiles.CopyInAsync(settings, mount.Folder, upload), MountedFiles.ReadAllAsync(settings, mount.Folder, restore));
        await WaitUploadedAsync(run, mount, restore.Count + upload.Count);
    }

    private async Task MountAsync(string run)
    {
        var root = Path.Combine(settings.Root, "rclone-mount", run);
        var folder = Path.Combine(root, "mnt");
        Directory.CreateDirectory(folder);
        var port = FreePort();
        var psi = new ProcessStartInfo("rclone", [
            "mount", $"bench:{bucket}/{run}", folder,
            "--vfs-cache-mode", "full",
            "--vfs-write-back", "0s",
            "--cache-dir", Path.Combine(root, "cache"),
            "--transfers", settings.Threads.ToString(CultureInfo.InvariantCulture),
            "--rc", "--rc-addr", $"127.0.0.1:{port}", "--rc-no-auth",
            .. RcloneRemote.TransferFlags(settings)])
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        RcloneRemote.Configure(psi, settings);
        var rclone = Process.Start(psi)!;
        var log = new StreamWriter(Path.Combine(root, "rclone.log")) { AutoFlush = true };
        rclone.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        rclone.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        rclone.BeginErrorReadLine();
        rclone.BeginOutputReadLine();
        var mount = new Mount(rclone, folder, root, port);
        _mounts[run] = mount;
        // Harness plumbing, not a measurement: the mount appears in the mount table within a second or two.
        for (var i = 0; i < 300 && !IsMounted(folder); i++)
        {
            if (rclone.HasExited)
            {
                throw new InvalidOperationException($"rclone mount exited ({rclone.ExitCode}); see {Path.Combine(root, "rclone.log")}");
            }
            await Task.Delay(20);
        }
        if (!IsMounted(folder))
        {
            throw new TimeoutException($"rclone mount of {run} did not appear at {folder}");
        }
    }

    private static bool IsMounted(string folder) =>
        File.ReadLines("/proc/self/mountinfo").Any(l => l.Split(' ')[4] == folder);

    private static int FreePort()
    {
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>
    /// Until rclone's write-back queue is empty and the run's prefix lists <paramref name="expected"/> objects. The
    /// queue alone is not enough: the kernel sends a file's release to rclone after close() returned.
    /// </summary>
    private async Task WaitUploadedAsync(string run, Mount mount, int expected)
    {
        var lastCount = -1;
        var lastProgress = DateTime.UtcNow;
        while (true)
        {
            if (await QueuedAsync(mount) == 0)
            {
                var count = await CountAsync(run);
                if (count >= expected)
                {
                    return;
                }
                if (count != lastCount)
                {
                    (lastCount, lastProgress) = (count, DateTime.UtcNow);
                }
                else if (DateTime.UtcNow - lastProgress > TimeSpan.FromMinutes(2))
                {
                    throw new TimeoutException($"{run}: {count} of {expected} objects in the bucket, none more for 2 min; see {Path.Combine(mount.Root, "rclone.log")}");
                }
            }
            await Task.Delay(20);
        }
    }

    /// <summary>Uploads in progress and queued, from rclone's remote control (vfs/stats).</summary>
    private async Task<long> QueuedAsync(Mount mount)
    {
        using var response = await _rc.PostAsync($"http://127.0.0.1:{mount.RcPort}/vfs/stats", JsonContent.Create(new { }));
        response.EnsureSuccessStatusCode();
        using var stats = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var cache = stats.RootElement.GetProperty("diskCache");
        return cache.GetProperty("uploadsInProgress").GetInt64() + cache.GetProperty("uploadsQueued").GetInt64();
    }

    private async Task<int> CountAsync(string run)
    {
        var request = new ListObjectsV2Request { BucketName = bucket, Prefix = run + "/" };
        var count = 0;
        while (true)
        {
            var page = await _s3.ListObjectsV2Async(request);
            count += page.S3Objects?.Count ?? 0;
            if (page.IsTruncated != true)
            {
                return count;
            }
            request.ContinuationToken = page.NextContinuationToken;
        }
    }

    public string? MountFolder(string run) => _mounts.GetValueOrDefault(run)?.Folder;

    public async Task FinishAsync(string run)
    {
        if (_mounts.Remove(run, out var mount))
        {
            await UnmountAsync(mount);
            Directory.Delete(mount.Root, recursive: true);
        }
    }

    private static async Task UnmountAsync(Mount mount)
    {
        using (var unmount = Process.Start("fusermount3", ["-u", mount.Folder]))
        {
            await unmount.WaitForExitAsync();
        }
        using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        try
        {
            await mount.Rclone.WaitForExitAsync(patience.Token);
        }
        catch (OperationCanceledException)
        {
            mount.Rclone.Kill();
            await mount.Rclone.WaitForExitAsync();
        }
    }

    public (double CpuSeconds, long PeakRss)? ResourceUse()
    {
        // One mount at a time in a run: its rclone is the client's process.
        if (_mounts.Values.LastOrDefault() is not { } mount || mount.Rclone.HasExited)
        {
            return null;
        }
        mount.Rclone.Refresh();
        var cpu = mount.Rclone.TotalProcessorTime.TotalSeconds;
        // Each run has its own rclone: its CPU counts from that process's start.
        var used = cpu - (_lastLooked == mount.Rclone.Id ? _cpuAtLastLook : 0);
        (_cpuAtLastLook, _lastLooked) = (cpu, mount.Rclone.Id);
        return (used, MountedFiles.PeakRss(mount.Rclone.Id));
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var mount in _mounts.Values)
        {
            await UnmountAsync(mount);
        }
        _mounts.Clear();
        _rc.Dispose();
        _s3.Dispose();
    }
}
