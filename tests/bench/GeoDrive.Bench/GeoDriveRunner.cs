using System.Diagnostics;
using System.Globalization;
using GeoDrive.Api;

namespace GeoDrive.Bench;

/// <summary>
/// GeoDrive as an administrator runs it: the service process, a drive per run made through the
/// control API, files copied into the FUSE mount, uploads timed until every object is verified
/// (the drive reports them Cached); restores are reads through the mount of stubbed files.
/// </summary>
public sealed class GeoDriveRunner : IBenchClient
{
    private readonly BenchSettings _settings;
    private readonly string _bucket;
    private readonly string _home;
    private readonly Process _service;
    private readonly GeoDriveClient _api;
    private double _cpuAtLastLook;

    private GeoDriveRunner(BenchSettings settings, string bucket, string home, Process service, GeoDriveClient api)
    {
        _settings = settings;
        _bucket = bucket;
        _home = home;
        _service = service;
        _api = api;
    }

    public string Name => "geodrive";

    public static async Task<GeoDriveRunner> StartAsync(BenchSettings settings, string bucket, string serviceDll)
    {
        var home = Path.Combine(settings.Root, "geodrive", Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(home);
        var socket = Path.Combine(home, "geodrive.sock");
        var psi = new ProcessStartInfo("dotnet", [serviceDll, "--socket", socket, "--home", Path.Combine(home, "home"), "--tick", "100ms"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        var service = Process.Start(psi)!;
        var log = new StreamWriter(Path.Combine(home, "service.log")) { AutoFlush = true };
        service.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        service.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        service.BeginOutputReadLine();
        service.BeginErrorReadLine();
        var api = new GeoDriveClient(socket);
        for (var i = 0; i < 200 && !File.Exists(socket); i++)
        {
            await Task.Delay(50);
        }
        await api.GetServiceAsync();
        return new GeoDriveRunner(settings, bucket, home, service, api);
    }

    private string Policy(string run)
    {
        var path = Path.Combine(_home, run + ".yaml");
        File.WriteAllText(path, string.Create(CultureInfo.InvariantCulture, $$"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: bench }
            spec:
              stubbing: { enabled: true, accessWait: 30d }
              upload: { settle: 0s }
              transfer:
                uploadThreads: {{_settings.Threads}}
                restoreThreads: {{_settings.Threads}}
                multipart: { threshold: {{_settings.MultipartThreshold / (1024 * 1024)}}MiB, partSize: {{_settings.PartSize / (1024 * 1024)}}MiB, uploadThreads: {{_settings.MultipartThreads}}, restoreThreads: {{_settings.MultipartThreads}} }
            """));
        return path;
    }

    private readonly Dictionary<string, string> _mounts = [];

    private async Task<string> DriveAsync(string run)
    {
        if (_mounts.TryGetValue(run, out var mounted))
        {
            return mounted;
        }
        var cache = Path.Combine(_home, run, "cache");
        var mount = Path.Combine(_home, run, "mnt");
        Directory.CreateDirectory(mount);
        await _api.NewDriveAsync(new NewDriveRequest
        {
            Name = run,
            CachePath = cache,
            MountPath = mount,
            Endpoint = _settings.Endpoint,
            Bucket = _bucket,
            Prefix = run + "/",
            PolicyPaths = [Policy(run)],
            AccessKey = _settings.AccessKey,
            SecretKey = _settings.SecretKey,
        });
        _mounts[run] = mount;
        return mount;
    }

    public async Task SeedAsync(string run, IReadOnlyList<string> files)
    {
        var mount = await DriveAsync(run);
        await MountedFiles.CopyInAsync(_settings, mount, files);
        await WaitCachedAsync(run, files.Count);
        await _api.StubAsync(run, new FileActionRequest { Paths = ["**"] });
    }

    public async Task RunAsync(string run, IReadOnlyList<string> upload, IReadOnlyList<string> restore)
    {
        var mount = await DriveAsync(run);
        // Restored files come back Cached, uploaded ones become Cached once verified in the bucket.
        var expected = (await _api.GetDriveAsync(run)).CachedCount + upload.Count + restore.Count;
        await Task.WhenAll(MountedFiles.CopyInAsync(_settings, mount, upload), MountedFiles.ReadAllAsync(_settings, mount, restore));
        await WaitCachedAsync(run, expected);
    }

    /// <summary>Waits until the drive reports <paramref name="expected"/> verified files and nothing left to upload.</summary>
    private async Task WaitCachedAsync(string run, long expected)
    {
        // Stalled rather than slow: nothing verified for two minutes (seen when the memstore OSD flagged
        // itself full and held every PUT; its log says "full status failsafe engaged").
        var lastCount = -1L;
        var lastProgress = DateTime.UtcNow;
        while (true)
        {
            var drive = await _api.GetDriveAsync(run);
            if (drive.CachedCount >= expected && drive.DirtyCount == 0)
            {
                return;
            }
            if (drive.CachedCount != lastCount)
            {
                (lastCount, lastProgress) = (drive.CachedCount, DateTime.UtcNow);
            }
            else if (DateTime.UtcNow - lastProgress > TimeSpan.FromMinutes(2))
            {
                throw new TimeoutException($"{run}: {drive.CachedCount} of {expected} files verified, none for 2 min (is the S3 server holding PUTs? see its OSD log)");
            }
            await Task.Delay(20);
        }
    }

    public string? MountFolder(string run) => _mounts.GetValueOrDefault(run);

    public async Task FinishAsync(string run)
    {
        if (_mounts.Remove(run))
        {
            await _api.RemoveDriveAsync(run);
            Directory.Delete(Path.Combine(_home, run), recursive: true);
        }
    }

    public (double CpuSeconds, long PeakRss)? ResourceUse()
    {
        _service.Refresh();
        var cpu = _service.TotalProcessorTime.TotalSeconds;
        var used = cpu - _cpuAtLastLook;
        _cpuAtLastLook = cpu;
        return (used, MountedFiles.PeakRss(_service.Id));
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var run in _mounts.Keys)
        {
            try
            {
                await _api.DismountDriveAsync(run);
            }
            catch (Exception ex) when (ex is HttpRequestException or InvalidOperationException)
            {
                Console.Error.WriteLine($"dismount {run}: {ex.Message}");
            }
        }
        _api.Dispose();
        // SIGTERM first: a service stopped cleanly finishes its trace file when one is recorded (DOTNET_EnableEventPipe).
        using (var term = Process.Start("kill", ["-TERM", _service.Id.ToString(CultureInfo.InvariantCulture)]))
        {
            await term.WaitForExitAsync();
        }
        using var patience = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        try
        {
            await _service.WaitForExitAsync(patience.Token);
        }
        catch (OperationCanceledException)
        {
            _service.Kill();
            await _service.WaitForExitAsync();
        }
    }
}
