using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using System.Text;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.Packaging.Tests;

/// <summary>
/// The service keeps the unit's contract with systemd (Type=notify, the journal): READY=1 on $NOTIFY_SOCKET once
/// its control socket answers, STOPPING=1 on SIGTERM, and each log line prefixed with its syslog level (&lt;6&gt;
/// information, &lt;4&gt; warning) for journalctl -p. systemd is not PID 1 here: a shell named "systemd" stands in
/// for it as the service's parent, which is how the service tells that systemd started it.
/// </summary>
public sealed class SystemdNotifyTests : IDisposable
{
    private readonly TempDirectory _temp = new("notify");

    [Fact]
    public async Task The_service_tells_systemd_it_is_ready_once_its_socket_answers_and_that_it_stops_on_SIGTERM()
    {
        var notifyPath = _temp.Combine("notify");
        using var notify = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        notify.Bind(new UnixDomainSocketEndPoint(notifyPath));
        var socket = _temp.Combine("geodrive.sock");
        var log = new StringBuilder();
        using var manager = StartUnderSystemd(notifyPath, socket, _temp.CreateSubdirectory("home"), log);

        var ready = await ReceiveAsync(notify, TimeSpan.FromSeconds(60));

        Assert.Contains("READY=1", ready, StringComparison.Ordinal);
        // Ready means ready: the control API answers the moment systemd is told.
        using var client = new GeoDriveClient(socket, TimeSpan.FromSeconds(5));
        var service = await client.GetServiceAsync();

        using (var term = Process.Start("kill", ["-TERM", service.ProcessId.ToString(CultureInfo.InvariantCulture)]))
        {
            await term.WaitForExitAsync();
        }
        var stopping = await ReceiveAsync(notify, TimeSpan.FromSeconds(30));
        Assert.Contains("STOPPING=1", stopping, StringComparison.Ordinal);
        await manager.WaitForExitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(40)).Token);

        string lines;
        lock (log)
        {
            lines = log.ToString();
        }
        Assert.Matches(@"(?m)^<6>.*GeoDrive service \d+ listening on " + System.Text.RegularExpressions.Regex.Escape(socket), lines);
        // No console timestamps: the journal keeps its own.
        Assert.DoesNotMatch(@"(?m)^\d{4}-\d{2}-\d{2}T", lines);
    }

    [Fact]
    public async Task Started_by_anything_else_the_service_notifies_nobody_and_logs_with_timestamps()
    {
        var notifyPath = _temp.Combine("notify");
        using var notify = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        notify.Bind(new UnixDomainSocketEndPoint(notifyPath));
        var socket = _temp.Combine("geodrive.sock");
        var log = new StringBuilder();
        using var manager = StartUnder("/bin/bash", notifyPath, socket, _temp.CreateSubdirectory("home"), log);
        using var client = new GeoDriveClient(socket, TimeSpan.FromSeconds(5));
        var service = await WaitForServiceAsync(client, manager);

        using (var term = Process.Start("kill", ["-TERM", service.ProcessId.ToString(CultureInfo.InvariantCulture)]))
        {
            await term.WaitForExitAsync();
        }
        await manager.WaitForExitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(40)).Token);

        Assert.Equal(0, notify.Available);
        lock (log)
        {
            Assert.Matches(@"(?m)^\d{4}-\d{2}-\d{2}T.*GeoDrive service \d+ listening on", log.ToString());
        }
    }

    /// <summary>A copy of bash named "systemd" runs the service as its child and waits for it, as systemd would.</summary>
    private Process StartUnderSystemd(string notifyPath, string socket, string home, StringBuilder log)
    {
        var systemd = _temp.Combine("systemd");
        File.Copy("/bin/bash", systemd);
        File.SetUnixFileMode(systemd, UnixFileMode.UserRead | UnixFileMode.UserExecute);
        return StartUnder(systemd, notifyPath, socket, home, log);
    }

    private static Process StartUnder(string shell, string notifyPath, string socket, string home, StringBuilder log)
    {
        var psi = new ProcessStartInfo(shell) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        // "&" and "wait": the shell stays the service's parent (a plain last command would be exec'ed in its place).
        foreach (var argument in new[] { "-c", "\"$@\" & wait $!", "manager", ServiceExecutable, "--socket", socket, "--home", home })
        {
            psi.ArgumentList.Add(argument);
        }
        psi.Environment["NOTIFY_SOCKET"] = notifyPath;
        var process = Process.Start(psi)!;
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.AppendLine(e.Data); } } };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.AppendLine(e.Data); } } };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static string ServiceExecutable
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains("/Release/", StringComparison.Ordinal) ? "Release" : "Debug";
            return Path.Combine(RepositoryRoot.Path, "engine/src/GeoDrive.Service/bin", configuration, "net10.0", "GeoDrive.Service");
        }
    }

    private static async Task<string> ReceiveAsync(Socket socket, TimeSpan timeout)
    {
        var buffer = new byte[4096];
        using var cts = new CancellationTokenSource(timeout);
        var n = await socket.ReceiveAsync(buffer, SocketFlags.None, cts.Token);
        return Encoding.UTF8.GetString(buffer, 0, n);
    }

    private static async Task<ServiceInfo> WaitForServiceAsync(GeoDriveClient client, Process manager)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            Assert.False(manager.HasExited, "the service exited before it answered");
            try
            {
                return await client.GetServiceAsync();
            }
            catch (Exception ex) when (ex is GeoDrive.Core.Errors.GeoDriveException or TaskCanceledException && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }

    public void Dispose() => _temp.Dispose();
}
