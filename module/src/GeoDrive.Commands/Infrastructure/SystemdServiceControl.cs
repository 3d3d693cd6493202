using System.Diagnostics;
using System.Globalization;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>What systemctl said about the unit geodrive.service.</summary>
public enum SystemdOutcome
{
    Done,
    NotInstalled,
    AccessDenied,
    Failed,
}

/// <summary>The unit as <c>systemctl show</c> reports it: whether it is installed, its state and its main process.</summary>
public sealed record SystemdUnitState(bool Installed, string ActiveState, int? MainProcessId)
{
    public bool IsActive => ActiveState is "active" or "activating" or "reloading";
}

/// <summary>
/// The systemd unit "geodrive.service" (docs/linux-service.md, installed by scripts/install-service.sh), driven
/// through systemctl, as <see cref="WindowsServiceControl"/> drives the SCM. Start-GeoDriveService starts the
/// unit when systemd runs the machine and the unit is installed, so the service runs with the unit's socket,
/// home, hardening and journal; Stop-GeoDriveService stops it through systemd when it is the unit's main
/// process, so systemd neither restarts it nor records a failure. Elsewhere (containers, no unit) the cmdlets
/// start and signal the process themselves. The reading of systemctl's answers is plain code.
/// </summary>
public sealed class SystemdServiceControl
{
    public const string UnitName = "geodrive.service";

    /// <param name="systemctl">The systemctl program.</param>
    /// <param name="bootedMarker">A folder that exists only when systemd runs the machine (sd_booted(3): /run/systemd/system).</param>
    /// <param name="socketPath">The control socket the unit's ExecStart names; null: /run/geodrive/geodrive.sock.</param>
    public SystemdServiceControl(string systemctl = "systemctl", string bootedMarker = "/run/systemd/system", string? socketPath = null)
    {
        Systemctl = systemctl;
        BootedMarker = bootedMarker;
        SocketPath = socketPath ?? ControlEndpoint.DefaultAddress(windows: false);
    }

    /// <summary>
    /// The one the cmdlets use. Replaceable (a host whose systemctl is elsewhere; the module's tests, where systemd
    /// does not run the machine, put a stand-in here).
    /// </summary>
    public static SystemdServiceControl Current { get; set; } = new();

    public string Systemctl { get; }

    public string BootedMarker { get; }

    /// <summary>Where the unit's service listens: a Start-GeoDriveService for another socket starts a process of its own.</summary>
    public string SocketPath { get; }

    /// <summary>True when systemd runs this machine (never on Windows).</summary>
    public bool IsBooted => !OperatingSystem.IsWindows() && Directory.Exists(BootedMarker);

    /// <summary>systemctl's exit codes (LSB): 0 done, 4 or 5 no such unit, 1 with polkit's or D-Bus's refusal: access denied.</summary>
    public static SystemdOutcome Interpret(int exitCode, string error) => exitCode switch
    {
        0 => SystemdOutcome.Done,
        _ when error.Contains("Access denied", StringComparison.OrdinalIgnoreCase)
            || error.Contains("authentication required", StringComparison.OrdinalIgnoreCase) => SystemdOutcome.AccessDenied,
        _ when error.Contains("not found", StringComparison.OrdinalIgnoreCase)
            || error.Contains("not loaded", StringComparison.OrdinalIgnoreCase) => SystemdOutcome.NotInstalled,
        5 => SystemdOutcome.NotInstalled,
        _ => SystemdOutcome.Failed,
    };

    /// <summary>
    /// Reads "systemctl show -p LoadState,ActiveState,MainPID" (KEY=value lines). A unit systemd cannot find has
    /// LoadState=not-found; MainPID=0 means no process.
    /// </summary>
    public static SystemdUnitState ParseShow(string output)
    {
        var values = (output ?? "").Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(line => line.Split('=', 2))
            .Where(pair => pair.Length == 2)
            .GroupBy(pair => pair[0], StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.Last()[1], StringComparer.Ordinal);
        var installed = values.TryGetValue("LoadState", out var load) && load is "loaded";
        var active = values.TryGetValue("ActiveState", out var state) ? state : "inactive";
        int? pid = values.TryGetValue("MainPID", out var text) && int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n > 0 ? n : null;
        return new SystemdUnitState(installed, active, pid);
    }

    /// <summary>The unit's state, or null when systemd does not run the machine or systemctl cannot be run.</summary>
    public SystemdUnitState? Query()
    {
        if (!IsBooted)
        {
            return null;
        }
        var (exitCode, output, _) = Run("show", "--property=LoadState,ActiveState,MainPID", UnitName);
        return exitCode is null ? null : ParseShow(output);
    }

    /// <summary>True when systemd runs the machine and the unit is installed: then the service is systemd's to start and stop.</summary>
    public bool IsInstalled() => Query() is { Installed: true };

    public (SystemdOutcome Outcome, string Output) Start() => Request("start");

    public (SystemdOutcome Outcome, string Output) Stop() => Request("stop");

    private (SystemdOutcome, string) Request(string verb)
    {
        var (exitCode, output, error) = Run(verb, UnitName);
        return exitCode is { } code ? (Interpret(code, error), (output + error).Trim()) : (SystemdOutcome.Failed, error);
    }

    private (int? ExitCode, string Output, string Error) Run(params string[] arguments)
    {
        var psi = new ProcessStartInfo(Systemctl)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        // No pager, no password prompt on this session's terminal: a refusal comes back as an answer.
        psi.ArgumentList.Add("--no-pager");
        psi.ArgumentList.Add("--no-ask-password");
        foreach (var argument in arguments)
        {
            psi.ArgumentList.Add(argument);
        }
        try
        {
            using var process = Process.Start(psi)!;
            var error = process.StandardError.ReadToEndAsync();
            var output = process.StandardOutput.ReadToEnd();
            process.WaitForExit();
            return (process.ExitCode, output, error.GetAwaiter().GetResult());
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            return (null, "", $"{Systemctl}: {ex.Message}");
        }
    }
}
