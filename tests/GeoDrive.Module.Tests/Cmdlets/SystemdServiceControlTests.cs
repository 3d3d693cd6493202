using System.Management.Automation;
using System.Runtime.Versioning;

namespace GeoDrive.Module.Tests;

/// <summary>
/// Start-/Stop-GeoDriveService with the systemd unit geodrive.service installed: systemd starts and stops the
/// service. systemd is not PID 1 here, so a stand-in systemctl (a script, named as such) answers "show" for an
/// installed unit and runs the real service on "start" as the unit's ExecStart would; how systemctl's answers
/// are read is checked as plain data.
/// </summary>
public sealed class SystemdServiceControlTests(ModuleSession session) : CmdletTests(session), IDisposable
{
    private const string Control = "[GeoDrive.Commands.SystemdServiceControl]";

    private readonly string _unit = Directory.CreateDirectory(Path.Combine(session.Scratch, "unit-" + Guid.NewGuid().ToString("N")[..8])).FullName;

    [Fact]
    public void Start_asks_systemd_to_start_the_installed_unit_and_returns_the_service_it_started_and_Stop_asks_systemd_to_stop_it()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;   // systemd is Linux's; on Windows the SCM is WindowsServiceControlTests'
        }
        UseStandIn(Systemctl(installed: true));

        var info = Session.Invoke("Start-GeoDriveService -Verbose").Single();

        Assert.Empty(Session.LastErrors);
        Assert.Contains(Session.LastVerbose, v => v.Message.Contains("systemd unit geodrive.service", StringComparison.Ordinal));
        Assert.Equal(int.Parse(File.ReadAllText(Path.Combine(_unit, "main.pid")), System.Globalization.CultureInfo.InvariantCulture), (int)info.Properties["ProcessId"].Value);
        // The unit's home, not the cmdlet's default: systemd ran what the unit says.
        Assert.Equal(Path.Combine(_unit, "home"), info.Properties["StatePath"].Value);
        Assert.Contains("start geodrive.service", File.ReadAllText(Path.Combine(_unit, "calls")), StringComparison.Ordinal);

        Session.Invoke("Stop-GeoDriveService -Confirm:$false");

        Assert.Empty(Session.LastErrors);
        Assert.Contains("stop geodrive.service", File.ReadAllText(Path.Combine(_unit, "calls")), StringComparison.Ordinal);
        Assert.False(File.Exists(Path.Combine(_unit, "main.pid")));
        AssertServiceNotRunning("Get-GeoDriveService", "GetGeoDriveServiceCommand");
    }

    [Fact]
    public void A_refusal_by_systemd_is_an_error_with_the_unit_and_the_journal_as_remedy()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;   // systemd is Linux's; on Windows the SCM is WindowsServiceControlTests'
        }
        UseStandIn(Systemctl(installed: true, start: "echo 'Failed to start geodrive.service: Access denied' >&2; exit 4"));

        var error = Session.InvokeExpectingError("Start-GeoDriveService");

        Assert.Equal("ServiceStartFailed,GeoDrive.Commands.StartGeoDriveServiceCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.PermissionDenied, error.CategoryInfo.Category);
        Assert.Contains("Access denied", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("journalctl -u geodrive", error.ErrorDetails.RecommendedAction, StringComparison.Ordinal);
    }

    [Fact]
    public void Without_the_unit_Start_runs_the_service_binary_itself_as_before()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;   // systemd is Linux's; on Windows the SCM is WindowsServiceControlTests'
        }
        UseStandIn(Systemctl(installed: false));
        var fake = Path.Combine(_unit, "dying-service.sh");
        File.WriteAllText(fake, "#!/bin/sh\necho \"started by the cmdlet: $*\" >&2\nexit 3\n");
        File.SetUnixFileMode(fake, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        var home = Path.Combine(_unit, "own-home");

        // No parameters, as with the unit installed; the binary and home come from the environment.
        var error = Session.InvokeExpectingError("""
            $env:GEODRIVE_SERVICE_PATH = $fake; $env:GEODRIVE_HOME = $stateHome
            try { Start-GeoDriveService } finally { $env:GEODRIVE_SERVICE_PATH = $null; $env:GEODRIVE_HOME = $null }
            """, new Dictionary<string, object?> { ["fake"] = fake, ["stateHome"] = home });

        Assert.Equal("ServiceStartFailed,GeoDrive.Commands.StartGeoDriveServiceCommand", error.FullyQualifiedErrorId);
        Assert.Contains($"started by the cmdlet: --socket {Session.DeadSocket} --home {home}", File.ReadAllText(Path.Combine(home, "service.log")), StringComparison.Ordinal);
        Assert.Contains("show", ReadCalls(), StringComparison.Ordinal);
        Assert.DoesNotContain("start geodrive.service", ReadCalls(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("LoadState=loaded\nActiveState=active\nMainPID=4711\n", true, "active", 4711)]
    [InlineData("LoadState=loaded\nActiveState=inactive\nMainPID=0\n", true, "inactive", null)]
    [InlineData("LoadState=not-found\nActiveState=inactive\nMainPID=0\n", false, "inactive", null)]
    [InlineData("", false, "inactive", null)]
    public void systemctl_show_is_read_as_the_units_state(string output, bool installed, string active, int? mainPid)
    {
        var state = Session.Invoke($"{Control}::ParseShow($text)", new Dictionary<string, object?> { ["text"] = output }).Single();

        Assert.Equal(installed, state.Properties["Installed"].Value);
        Assert.Equal(active, state.Properties["ActiveState"].Value);
        Assert.Equal(mainPid, state.Properties["MainProcessId"].Value);
    }

    [Theory]
    [InlineData(0, "", "Done")]
    [InlineData(5, "Failed to start geodrive.service: Unit geodrive.service not found.", "NotInstalled")]
    [InlineData(4, "Failed to start geodrive.service: Access denied", "AccessDenied")]
    [InlineData(1, "Failed to start geodrive.service: Interactive authentication required.", "AccessDenied")]
    [InlineData(1, "Job for geodrive.service failed because the control process exited with error code.", "Failed")]
    public void A_systemctl_exit_code_and_message_are_read_as_systemds_answer(int exitCode, string error, string outcome) =>
        Assert.Equal(outcome, Session.Invoke($"{Control}::Interpret({exitCode}, $e).ToString()", new Dictionary<string, object?> { ["e"] = error }).Single().ToString());

    [Fact]
    public void The_unit_and_socket_are_the_ones_the_install_script_installs() =>
        Assert.Equal("geodrive.service /run/geodrive/geodrive.sock",
            Session.Invoke($"\"$({Control}::UnitName) $({Control}::new().SocketPath)\"").Single().ToString());

    /// <summary>
    /// A stand-in systemctl: "show" reports the unit installed (or not-found) with the service's pid; "start" runs the
    /// real service as ExecStart would (detached, on this session's socket, with a home of the unit's); "stop" sends
    /// SIGTERM and waits, as systemctl stop does. Every call is appended to "calls".
    /// </summary>
    [SupportedOSPlatform("linux")]
    private string Systemctl(bool installed, string? start = null)
    {
        var service = RepoRoot.Combine("engine", "src", "GeoDrive.Service", "bin", RepoRoot.Configuration, "net10.0", "GeoDrive.Service");
        var script = $$"""
            #!/bin/bash
            dir='{{_unit}}'; echo "$*" >> "$dir/calls"
            while [[ $1 == --* ]]; do shift; done
            pidfile=$dir/main.pid
            running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }
            case $1 in
              show)
                if [ {{(installed ? 1 : 0)}} = 0 ]; then printf 'LoadState=not-found\nActiveState=inactive\nMainPID=0\n'; exit 0; fi
                if running; then printf 'LoadState=loaded\nActiveState=active\nMainPID=%s\n' "$(cat "$pidfile")"
                else printf 'LoadState=loaded\nActiveState=inactive\nMainPID=0\n'; fi ;;
              start)
                {{start ?? ""}}
                running && exit 0
                # A shell that waits stays the service's parent and reaps it, as systemd does.
                setsid bash -c '"$@" & echo $! > "$0"; wait' "$pidfile" '{{service}}' --socket '{{Session.DeadSocket}}' --home "$dir/home" >>"$dir/journal" 2>&1 </dev/null &
                for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.05; done ;;
              stop)
                running || exit 0
                pid=$(cat "$pidfile"); kill -TERM "$pid"
                while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
                rm -f "$pidfile" ;;
            esac
            """;
        var path = Path.Combine(_unit, "systemctl");
        File.WriteAllText(path, script.Replace("\r\n", "\n", StringComparison.Ordinal));
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }

    /// <summary>The cmdlets use the stand-in, with systemd "running" (a marker folder that exists) and the session's socket as the unit's.</summary>
    private void UseStandIn(string systemctl) =>
        Session.Invoke($"{Control}::Current = {Control}::new($s, $m, $k)",
            new Dictionary<string, object?> { ["s"] = systemctl, ["m"] = _unit, ["k"] = Session.DeadSocket });

    private string ReadCalls() => File.Exists(Path.Combine(_unit, "calls")) ? File.ReadAllText(Path.Combine(_unit, "calls")) : "";

    public void Dispose()
    {
        Session.Invoke($"{Control}::Current = {Control}::new()");
        var pidFile = Path.Combine(_unit, "main.pid");
        if (File.Exists(pidFile) && int.TryParse(File.ReadAllText(pidFile), out var pid))
        {
            try
            {
                using var process = System.Diagnostics.Process.GetProcessById(pid);
                process.Kill();
            }
            catch (ArgumentException)
            {
            }
        }
    }
}
