using System.Diagnostics;

namespace GeoDrive.Module.Tests;

/// <summary>
/// scripts/gdpwsh and GeoDrive.PSHost as a script runner: exit codes, stdout, errors on stderr with
/// their FullyQualifiedErrorId, and the module's format views rendered through Out-Default.
/// GEODRIVE_USE_PSHOST=1 makes gdpwsh use our host even where pwsh is installed.
/// </summary>
public sealed class HostTests : IDisposable
{
    private static readonly string HostDll =
        RepoRoot.Combine("module", "host", "GeoDrive.PSHost", "bin", RepoRoot.Configuration, "net10.0", "GeoDrive.PSHost.dll");

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "geodrive-test", "host-" + Guid.NewGuid().ToString("N")[..12]);

    public HostTests() => Directory.CreateDirectory(_folder);

    private sealed record Run(int ExitCode, string Stdout, string Stderr);

    private Run Gdpwsh(params string[] args)
    {
        using var process = Start(args);
        process.StandardInput.Close();
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromSeconds(90)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException("gdpwsh " + string.Join(' ', args));
        }
        return new Run(process.ExitCode, stdout.Result, stderr.Result);
    }

    private Process Start(string[] args, bool defaultSigInt = false)
    {
        Assert.True(File.Exists(HostDll), $"build the host first: {HostDll}");
        // A process started from a background job inherits SIGINT as ignored, and .NET keeps it so;
        // python resets it to the default before exec so that the Ctrl+C test means something anywhere.
        string[] command = defaultSigInt
            ? ["python3", "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])", "bash", RepoRoot.Combine("scripts", "gdpwsh"), .. args]
            : ["bash", RepoRoot.Combine("scripts", "gdpwsh"), .. args];
        var psi = new ProcessStartInfo(command[0], command[1..])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            UseShellExecute = false,
            WorkingDirectory = RepoRoot.Path,
        };
        psi.Environment["GEODRIVE_USE_PSHOST"] = "1";
        psi.Environment["GEODRIVE_PSHOST"] = HostDll;
        psi.Environment["GEODRIVE_SOCKET"] = Path.Combine(_folder, "nobody-listens.sock");
        return Process.Start(psi)!;
    }

    private string Script(string text)
    {
        var path = Path.Combine(_folder, Guid.NewGuid().ToString("N")[..8] + ".ps1");
        File.WriteAllText(path, text);
        return path;
    }

    [Fact]
    public void Exit_n_in_a_command_becomes_the_exit_code() =>
        Assert.Equal(3, Gdpwsh("-NoProfile", "-Command", "exit 3").ExitCode);

    [Fact]
    public void A_script_file_writes_to_stdout_and_exits_0()
    {
        var run = Gdpwsh("-NoProfile", "-File", Script("[Console]::WriteLine('hello')"));

        Assert.Equal(0, run.ExitCode);
        Assert.Equal("hello", run.Stdout.Trim());
        Assert.Equal("", run.Stderr);
    }

    [Fact]
    public void A_script_that_throws_exits_1_with_the_error_on_stderr()
    {
        var run = Gdpwsh("-File", Script("[Console]::WriteLine('before')\nthrow 'the disk is on fire'\n[Console]::WriteLine('after')"));

        Assert.Equal(1, run.ExitCode);
        Assert.Equal("before", run.Stdout.Trim());
        Assert.Contains("the disk is on fire", run.Stderr, StringComparison.Ordinal);
        Assert.Contains("FullyQualifiedErrorId", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void An_advanced_script_stopped_by_an_error_exits_1()
    {
        var run = Gdpwsh("-File", Script(
            "param([Parameter(Mandatory)] [string] $Name)\n$ErrorActionPreference = 'Stop'\n" +
            "Get-Item -LiteralPath '/nonexistent/geodrive'\n[Console]::WriteLine('after')"), "-Name", "x");

        Assert.Equal(1, run.ExitCode);
        Assert.DoesNotContain("after", run.Stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void Exit_n_in_a_script_file_becomes_the_exit_code() =>
        Assert.Equal(7, Gdpwsh("-File", Script("exit 7")).ExitCode);

    [Fact]
    public void Script_arguments_bind_to_its_parameters_by_name_and_position()
    {
        var script = Script("param([string] $First, [string] $Name, [switch] $Loud)\n[Console]::WriteLine(\"$First|$Name|$Loud|$PSScriptRoot\")");

        var run = Gdpwsh("-File", script, "one two", "-Name", "it's", "-Loud");

        Assert.Equal(0, run.ExitCode);
        Assert.Equal($"one two|it's|True|{_folder}", run.Stdout.Trim());
    }

    [Fact]
    public async Task Ctrl_C_stops_the_running_script_and_exits_130()
    {
        using var process = Start(["-File", Script("[Console]::WriteLine('looping')\nwhile ($true) { $x = 1 }")], defaultSigInt: true);
        process.StandardInput.Close();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        Assert.Equal("looping", await process.StandardOutput.ReadLineAsync(timeout.Token));

        // bash and python exec'd into the host, so this is the host's own process id.
        using (var kill = Process.Start("kill", ["-INT", process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
        {
            await kill.WaitForExitAsync(timeout.Token);
        }

        await process.WaitForExitAsync(timeout.Token);
        Assert.Equal(130, process.ExitCode);
        Assert.Contains("Stopped", await process.StandardError.ReadToEndAsync(timeout.Token), StringComparison.Ordinal);
    }

    [Fact]
    public void A_cmdlet_error_is_printed_with_its_FullyQualifiedErrorId_and_the_command_fails()
    {
        var run = Gdpwsh("-Command", $"Import-Module '{ModuleSession.ManifestPath}'; Get-CloudDrive");

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("ServiceNotRunning,GeoDrive.Commands.GetCloudDriveCommand", run.Stderr, StringComparison.Ordinal);
        Assert.Contains("Start-GeoDriveService", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void The_module_format_views_render_as_tables_through_Out_Default()
    {
        var run = Gdpwsh("-Command", $$"""
            Import-Module '{{ModuleSession.ManifestPath}}'
            [GeoDrive.Api.DriveInfo]@{ Name = 'finance'; CachePath = '/srv/c'; MountPath = '/mnt/finance'; Endpoint = 'http://127.0.0.1:9000'; Bucket = 'fin'; Mounted = $true; DirtyCount = 2; CachedCount = 10; StubbedCount = 300 } | Out-Default
            [GeoDrive.Api.CloudFileInfo]@{ Drive = 'finance'; Path = 'reports/q1.pdf'; State = 'Stubbed'; Size = 1572864 } | Out-Default
            """);

        Assert.Equal(0, run.ExitCode);
        Assert.Equal("", run.Stderr);
        var lines = run.Stdout.Split('\n').Select(l => l.TrimEnd()).ToList();
        Assert.Contains(lines, l => l.StartsWith("Name", StringComparison.Ordinal) && l.Contains("Mounted MountPath", StringComparison.Ordinal) && l.EndsWith("Stubbed", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith("finance", StringComparison.Ordinal) && l.EndsWith("300", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.Contains("Stubbed", StringComparison.Ordinal) && l.Contains("1.5 MiB", StringComparison.Ordinal) && l.EndsWith("reports/q1.pdf", StringComparison.Ordinal));
        Assert.DoesNotContain('\u001b', run.Stdout);
    }

    [Fact]
    public void The_core_cmdlets_and_help_are_there()
    {
        var run = Gdpwsh("-Command", $"Import-Module '{ModuleSession.ManifestPath}'; (Get-Help Invoke-ForceStub).Synopsis; (Get-Command -Module GeoDrive | Measure-Object -ErrorAction Ignore); @(Get-Command -Module GeoDrive).Count");

        Assert.Contains("Stubs files now", run.Stdout, StringComparison.Ordinal);
        Assert.EndsWith(HelpTests.ManifestList("CmdletsToExport").Count.ToString(System.Globalization.CultureInfo.InvariantCulture), run.Stdout.Trim(), StringComparison.Ordinal);
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_folder, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
