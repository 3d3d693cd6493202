using System.Globalization;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using GeoDrive.Api;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Packaging.Tests;

/// <summary>
/// scripts/install-service.sh into a temporary root (systemd is not PID 1 here, so nothing is started): the
/// service's build, the release's module package and the unit land where docs/linux-service.md says, a second
/// run changes nothing, systemd-analyze verifies the installed unit, and --uninstall leaves state and caches.
/// </summary>
[Collection(ReleaseCollection.Name)]
public sealed partial class InstallScriptTests(ReleaseFixture release, ITestOutputHelper output) : IDisposable
{
    private readonly TempDirectory _root = new("root");

    private string Root => _root.Path;

    /// <summary>The service as the solution built it (an executable beside its assemblies).</summary>
    private static string ServiceBuild
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains("/Release/", StringComparison.Ordinal) ? "Release" : "Debug";
            return Path.Combine(RepositoryRoot.Path, "engine/src/GeoDrive.Service/bin", configuration, "net10.0");
        }
    }

    [Fact]
    public void The_service_module_and_unit_land_in_their_places_and_systemd_analyze_verifies_the_unit()
    {
        Install();

        Assert.True(File.Exists(In("usr/lib/geodrive/GeoDrive.Service")));
        Assert.True((File.GetUnixFileMode(In("usr/lib/geodrive/GeoDrive.Service")) & UnixFileMode.OtherExecute) != 0);
        Assert.True(File.Exists(In("usr/lib/geodrive/docs/linux-service.md")));
        var module = In($"usr/local/share/powershell/Modules/GeoDrive/{release.Version}");
        Assert.True(File.Exists(Path.Combine(module, "GeoDrive.psd1")));
        Assert.True(File.Exists(Path.Combine(module, "module/bin/GeoDrive.Commands.dll")));
        Assert.False(File.Exists(Path.Combine(module, "GeoDrive.nuspec")));
        Assert.Equal(File.ReadAllText(Path.Combine(RepositoryRoot.Path, "packaging/linux/geodrive.service")), File.ReadAllText(In("etc/systemd/system/geodrive.service")));

        var (exitCode, stdout, stderr) = Verify();
        Assert.True(exitCode == 0, $"systemd-analyze verify exited {exitCode}: {stdout}{stderr}");
        Assert.Equal("", stderr.Trim());
    }

    [Fact]
    public void The_unit_runs_the_installed_service_on_the_socket_and_home_the_module_looks_for()
    {
        var unit = File.ReadAllText(Path.Combine(RepositoryRoot.Path, "packaging/linux/geodrive.service"));
        var execStart = ExecStartLine().Match(unit).Groups[1].Value.Split(' ');

        Assert.Equal("/usr/lib/geodrive/GeoDrive.Service", execStart[0]);
        Assert.Equal(ControlEndpoint.DefaultAddress(windows: false), execStart[Array.IndexOf(execStart, "--socket") + 1]);
        Assert.Equal("/var/lib/geodrive", execStart[Array.IndexOf(execStart, "--home") + 1]);
        // The folders systemd makes for them (RuntimeDirectory=, StateDirectory=) are the socket's and the home.
        Assert.Contains("RuntimeDirectory=geodrive\n", unit, StringComparison.Ordinal);
        Assert.Contains("StateDirectory=geodrive\n", unit, StringComparison.Ordinal);
    }

    [Fact]
    public void Verification_fails_when_the_unit_names_a_program_that_is_not_there()
    {
        Install();
        File.Delete(In("usr/lib/geodrive/GeoDrive.Service"));

        var (exitCode, _, stderr) = Verify();

        Assert.NotEqual(0, exitCode);
        Assert.Contains("/usr/lib/geodrive/GeoDrive.Service is not executable", stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void The_hardening_keeps_systemds_exposure_score_at_or_below_4()
    {
        Install();

        var (exitCode, stdout, stderr) = Command.Run("systemd-analyze", "security", "--offline=true", $"--root={Root}", "geodrive.service");

        Assert.True(exitCode == 0, stderr);
        var score = double.Parse(ExposureLine().Match(stdout).Groups[1].Value, CultureInfo.InvariantCulture);
        output.WriteLine($"systemd-analyze security: exposure {score} (0 = fully sandboxed, 10 = none)");
        Assert.InRange(score, 0, 4.0);
        // What the service needs, and nothing a file server does not: no raw I/O, ptrace, module loading or network admin.
        foreach (var check in new[] { "NoNewPrivileges=", "PrivateTmp=", "CapabilityBoundingSet=~CAP_SYS_PTRACE", "CapabilityBoundingSet=~CAP_NET_ADMIN", "ProtectKernelModules=" })
        {
            Assert.Matches(@"✓ " + Regex.Escape(check), stdout);
        }
    }

    [Fact]
    public void A_second_install_leaves_the_same_files_and_nothing_half_copied()
    {
        Install();
        var first = Snapshot();

        Install();

        Assert.Equal(first, Snapshot());
        Assert.DoesNotContain(first.Keys, p => p.Contains(".new", StringComparison.Ordinal) || p.Contains(".old", StringComparison.Ordinal));
    }

    [Fact]
    public void Uninstall_removes_the_service_module_and_unit_and_leaves_the_state_and_the_caches()
    {
        Install();
        var definition = In("var/lib/geodrive/drives/finance.json");
        var cached = In("srv/finance-cache/report.txt");
        Directory.CreateDirectory(Path.GetDirectoryName(definition)!);
        Directory.CreateDirectory(Path.GetDirectoryName(cached)!);
        File.WriteAllText(definition, "{\"name\":\"finance\"}");
        File.WriteAllText(cached, "q3");

        Script.Run("scripts/install-service.sh", "--root", Root, "--uninstall");
        Script.Run("scripts/install-service.sh", "--root", Root, "--uninstall");

        Assert.False(Directory.Exists(In("usr/lib/geodrive")));
        Assert.False(Directory.Exists(In("usr/local/share/powershell/Modules/GeoDrive")));
        Assert.False(File.Exists(In("etc/systemd/system/geodrive.service")));
        Assert.Equal("{\"name\":\"finance\"}", File.ReadAllText(definition));
        Assert.Equal("q3", File.ReadAllText(cached));
    }

    [Fact]
    public void A_service_folder_without_the_program_is_refused_with_an_error_id()
    {
        var empty = _root.CreateSubdirectory("not-a-service");

        var (exitCode, _, stderr) = Script.Try("scripts/install-service.sh", "--root", In("target"), "--service", empty, "--module", release.PackagePath);

        Assert.NotEqual(0, exitCode);
        Assert.StartsWith("error InstallServiceNotFound:", stderr, StringComparison.Ordinal);
        Assert.False(Directory.Exists(In("target/usr/lib/geodrive")));
    }

    private void Install()
    {
        Script.Run("scripts/install-service.sh", "--root", Root, "--service", ServiceBuild, "--module", release.PackagePath);
        // systemd's own targets, as every real root has them (the unit is wanted by multi-user.target, after network-online.target).
        var units = In("usr/lib/systemd/system");
        Directory.CreateDirectory(units);
        foreach (var target in Directory.GetFiles("/usr/lib/systemd/system", "*.target"))
        {
            File.Copy(target, Path.Combine(units, Path.GetFileName(target)), overwrite: true);
        }
    }

    private (int ExitCode, string Output, string Error) Verify() =>
        Command.Run("systemd-analyze", "verify", "--man=no", $"--root={Root}", "geodrive.service");

    /// <summary>Every installed file: its path, mode and content hash.</summary>
    private Dictionary<string, string> Snapshot() =>
        new[] { "usr/lib/geodrive", "usr/local/share/powershell/Modules/GeoDrive", "etc/systemd/system" }
            .SelectMany(d => Directory.EnumerateFileSystemEntries(In(d), "*", SearchOption.AllDirectories))
            .ToDictionary(p => Path.GetRelativePath(Root, p),
                p => File.Exists(p) ? $"{File.GetUnixFileMode(p)} {Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(p)))}" : "dir");

    private string In(string relative) => Path.Combine(Root, relative);

    [GeneratedRegex(@"^ExecStart=(.+)$", RegexOptions.Multiline)]
    private static partial Regex ExecStartLine();

    [GeneratedRegex(@"Overall exposure level for geodrive\.service: (\d+\.\d+)")]
    private static partial Regex ExposureLine();

    public void Dispose() => _root.Dispose();
}
