using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;

namespace GeoDrive.Commands;

/// <summary>Starting the service detached from this PowerShell, and signalling it (Unix: SIGTERM, so drives dismount cleanly).</summary>
internal static partial class ServiceProcess
{
    private const int SigTerm = 15;

    /// <summary>The repository (or install) folder: the module's assembly lives in &lt;root&gt;/module/bin.</summary>
    public static string ModuleRoot =>
        Path.GetFullPath(Path.Combine(Path.GetDirectoryName(typeof(ServiceProcess).Assembly.Location) ?? ".", "..", ".."));

    /// <summary>The repository's build (scripts/build.sh), else where scripts/install-service.sh puts the service.</summary>
    public static string DefaultBinary =>
        Path.Combine(ModuleRoot, ".artifacts", "service", "GeoDrive.Service") is var built && (File.Exists(built) || OperatingSystem.IsWindows() || !File.Exists(InstalledBinary))
            ? built : InstalledBinary;

    private const string InstalledBinary = "/usr/lib/geodrive/GeoDrive.Service";

    /// <summary>Starts the service in its own session, output appended to <paramref name="logPath"/>; returns its process id.</summary>
    public static int StartDetached(string binary, string socketPath, string homePath, string logPath)
    {
        string[] command = binary.EndsWith(".dll", StringComparison.OrdinalIgnoreCase)
            ? ["dotnet", binary, "--socket", socketPath, "--home", homePath]
            : [binary, "--socket", socketPath, "--home", homePath];

        if (OperatingSystem.IsWindows())
        {
            using var process = Process.Start(new ProcessStartInfo(command[0], command[1..]) { UseShellExecute = false, CreateNoWindow = true })!;
            return process.Id;
        }

        // setsid + redirections: the service outlives this PowerShell and its terminal, and Ctrl+C here does not reach it.
        const string script = """
            log=$1; shift
            if command -v setsid >/dev/null 2>&1; then setsid "$@" >>"$log" 2>&1 </dev/null &
            else nohup "$@" >>"$log" 2>&1 </dev/null &
            fi
            echo $!
            """;
        var psi = new ProcessStartInfo("/bin/sh", ["-c", script, "geodrive-start", logPath, .. command])
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
        };
        using var shell = Process.Start(psi)!;
        var pid = shell.StandardOutput.ReadToEnd().Trim();
        shell.WaitForExit();
        return int.Parse(pid, CultureInfo.InvariantCulture);
    }

    public static bool IsAlive(int processId)
    {
        try
        {
            using var process = Process.GetProcessById(processId);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    /// <summary>
    /// Asks the service to stop: SIGTERM on Unix (it dismounts its drives); on Windows the SCM's stop
    /// when it is the installed service "GeoDrive" (the host then stops cleanly), else a kill.
    /// </summary>
    public static void Terminate(int processId)
    {
        if (OperatingSystem.IsWindows())
        {
            if (WindowsServiceControl.RunningProcessId() == processId && WindowsServiceControl.Stop().Outcome is ScmOutcome.Done or ScmOutcome.NotRunning)
            {
                return;
            }
            using var process = Process.GetProcessById(processId);
            process.Kill();
            return;
        }
        if (Kill(processId, SigTerm) != 0 && IsAlive(processId))
        {
            throw new InvalidOperationException($"kill({processId}, SIGTERM) failed with errno {Marshal.GetLastPInvokeError()}.");
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
