using System.Diagnostics;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The real GeoDrive service as a child process with its own socket and home folder. Can be killed
/// with SIGKILL and started again over the same home, as after a crash.
/// </summary>
public sealed class ServiceProcess : IAsyncDisposable
{
    private readonly TempDirectory _temp = new("svc");
    private Process? _process;

    public ServiceProcess()
    {
        SocketPath = _temp.Combine("geodrive.sock");
        HomePath = _temp.CreateSubdirectory("home");
        LogPath = _temp.Combine("service.log");
        // Tests kill and restart the service often, and wait for what it owes the bucket: its local server acts on a request
        // within milliseconds, not the 2 minutes allowed for a server anywhere.
        Environment[LateWriteGraceVariable] = "5s";
    }

    /// <summary>How long after a start deletes the previous run owed are looked at again (the service's --late-write-grace).</summary>
    public const string LateWriteGraceVariable = "GEODRIVE_LATE_WRITE_GRACE";

    public string SocketPath { get; }
    public string HomePath { get; }
    public string LogPath { get; }
    public string Root => _temp.Path;
    public int ProcessId => _process?.Id ?? 0;

    /// <summary>More service arguments, e.g. the test-only "--test-clock FILE" (recall job tests).</summary>
    public string[] ExtraArguments { get; set; } = [];

    /// <summary>Environment variables for the service from its next start, e.g. a log level an administrator would set.</summary>
    public Dictionary<string, string> Environment { get; } = [];

    public static string ServiceDll
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains("/Release/", StringComparison.Ordinal) ? "Release" : "Debug";
            var dll = Path.Combine(RepoRoot.Path, "engine/src/GeoDrive.Service/bin", configuration, "net10.0/GeoDrive.Service.dll");
            return File.Exists(dll) ? dll : throw new FileNotFoundException("Build the solution first (scripts/test.sh does).", dll);
        }
    }

    public async Task StartAsync()
    {
        var psi = new ProcessStartInfo("dotnet", [ServiceDll, "--socket", SocketPath, "--home", HomePath, "--tick", "200ms", .. ExtraArguments])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var (name, value) in Environment)
        {
            psi.Environment[name] = value;
        }
        _process = Process.Start(psi)!;
        var log = new StreamWriter(LogPath, append: true) { AutoFlush = true };
        _process.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        _process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.WriteLine(e.Data); } } };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();

        using var client = new GeoDriveClient(SocketPath, TimeSpan.FromSeconds(5));
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"The service exited with {_process.ExitCode}; log:\n{ReadLog()}");
            }
            try
            {
                await client.GetServiceAsync();
                return;
            }
            // A service still starting on a loaded machine may accept the connection and answer after the
            // client's 5 s timeout (TaskCanceledException): that is "not yet", like "not running".
            catch (Exception ex) when (ex is GeoDrive.Core.Errors.GeoDriveException or TaskCanceledException && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }

    /// <summary>kill -9: no shutdown code runs, the FUSE mount is left stale.</summary>
    public void Kill()
    {
        if (_process is { HasExited: false })
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }
    }

    /// <summary>SIGTERM and wait: drives are dismounted cleanly.</summary>
    public async Task StopAsync()
    {
        if (_process is { HasExited: false })
        {
            using var term = Process.Start("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            await term.WaitForExitAsync();
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(40));
            try
            {
                await _process.WaitForExitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                Kill();
            }
        }
    }

    public string ReadLog()
    {
        try
        {
            using var stream = new FileStream(LogPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            return new StreamReader(stream).ReadToEnd();
        }
        catch (FileNotFoundException)
        {
            return "";
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        foreach (var line in File.Exists("/proc/mounts") ? await File.ReadAllLinesAsync("/proc/mounts") : [])
        {
            var mountPoint = line.Split(' ')[1];
            if (mountPoint.StartsWith(_temp.Path, StringComparison.Ordinal))
            {
                using var unmount = Process.Start("fusermount3", ["-u", "-z", mountPoint]);
                await unmount.WaitForExitAsync();
            }
        }
        _process?.Dispose();
        _temp.Dispose();
    }
}
