using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace GeoDrive.Commands;

/// <summary>What sc.exe said about a request to the Service Control Manager.</summary>
public enum ScmOutcome
{
    Done,
    AlreadyRunning,
    NotInstalled,
    NotRunning,
    AccessDenied,
    Failed,
}

/// <summary>
/// The Windows service "GeoDrive" (docs/windows.md: installed with sc.exe create or New-Service), driven
/// through sc.exe so the module needs no Windows-only assembly. Start-GeoDriveService starts it through
/// the SCM when it is installed, and Stop-GeoDriveService stops it the same way when it is the running
/// service, so the SCM never sees its service killed. The reading of sc.exe's answers is plain code.
/// </summary>
public static partial class WindowsServiceControl
{
    public const string ServiceName = "GeoDrive";

    /// <summary>sc.exe's exit code is the Win32 error: 1056 already running, 1060 not installed, 1062 not started, 5 access denied.</summary>
    public static ScmOutcome Interpret(int exitCode) => exitCode switch
    {
        0 => ScmOutcome.Done,
        1056 => ScmOutcome.AlreadyRunning,
        1060 => ScmOutcome.NotInstalled,
        1062 => ScmOutcome.NotRunning,
        5 => ScmOutcome.AccessDenied,
        _ => ScmOutcome.Failed,
    };

    /// <summary>The process id in "sc.exe queryex" output ("PID : 1234"); null when there is none or it is 0 (stopped).</summary>
    public static int? ParseProcessId(string queryexOutput)
    {
        var match = PidLine().Match(queryexOutput ?? "");
        return match.Success && int.TryParse(match.Groups[1].Value, NumberStyles.None, CultureInfo.InvariantCulture, out var pid) && pid > 0 ? pid : null;
    }

    public static bool IsInstalled() => Run("query", ServiceName).Item1 != ScmOutcome.NotInstalled;

    public static (ScmOutcome Outcome, string Output) Start() => Run("start", ServiceName);

    public static (ScmOutcome Outcome, string Output) Stop() => Run("stop", ServiceName);

    /// <summary>The running service's process id, or null when it is not installed or not running.</summary>
    public static int? RunningProcessId()
    {
        var (outcome, output) = Run("queryex", ServiceName);
        return outcome == ScmOutcome.Done ? ParseProcessId(output) : null;
    }

    private static (ScmOutcome, string) Run(params string[] arguments)
    {
        var psi = new ProcessStartInfo("sc.exe", arguments) { UseShellExecute = false, RedirectStandardOutput = true, CreateNoWindow = true };
        using var process = Process.Start(psi)!;
        var output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return (Interpret(process.ExitCode), output);
    }

    [GeneratedRegex(@"^\s*PID\s*:\s*(\d+)\s*$", RegexOptions.Multiline)]
    private static partial Regex PidLine();
}
