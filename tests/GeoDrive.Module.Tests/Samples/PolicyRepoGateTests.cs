using System.Diagnostics;

namespace GeoDrive.Module.Tests;

/// <summary>
/// samples/policy-repo's CI gate, run as a CI job runs it (ci/check-policies.sh -> scripts/gdpwsh -> our
/// host): the sample's policies pass, and a copy with one broken file fails the build with the problem.
/// </summary>
public sealed class PolicyRepoGateTests : IDisposable
{
    private static readonly string HostDll =
        RepoRoot.Combine("module", "host", "GeoDrive.PSHost", "bin", RepoRoot.Configuration, "net10.0", "GeoDrive.PSHost.dll");

    private static readonly string Sample = RepoRoot.Combine("samples", "policy-repo");

    private readonly string _copy = Path.Combine(Path.GetTempPath(), "geodrive-test", "policy-repo-" + Guid.NewGuid().ToString("N")[..12]);

    public PolicyRepoGateTests()
    {
        Directory.CreateDirectory(_copy);
        foreach (var file in Directory.GetFiles(Path.Combine(Sample, "policies")))
        {
            File.Copy(file, Path.Combine(_copy, Path.GetFileName(file)));
        }
    }

    private static (int ExitCode, string Stdout, string Stderr) Gate(params string[] args)
    {
        Assert.True(File.Exists(HostDll), $"build the host first: {HostDll}");
        var psi = new ProcessStartInfo("bash", [Path.Combine(Sample, "ci", "check-policies.sh"), .. args])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = Path.GetTempPath(),
        };
        psi.Environment["GEODRIVE_USE_PSHOST"] = "1";
        psi.Environment["GEODRIVE_PSHOST"] = HostDll;
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromSeconds(120)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException("the policy gate did not finish");
        }
        return (process.ExitCode, stdout.Result, stderr.Result);
    }

    [Fact]
    public void The_sample_policies_pass_the_gate()
    {
        var run = Gate();

        Assert.True(run.ExitCode == 0, run.Stdout + run.Stderr);
        Assert.Contains("2 policy file(s)", run.Stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void A_broken_policy_fails_the_build_naming_file_line_column_and_error_id()
    {
        var finance = Path.Combine(_copy, "finance.yaml");
        File.WriteAllText(finance, File.ReadAllText(finance).Replace("accessWait: 1d", "accessWait: 1day", StringComparison.Ordinal));

        var run = Gate("-PolicyRoot", _copy);

        Assert.True(run.ExitCode == 1, run.Stdout + run.Stderr);
        Assert.Contains($"{finance}:12:", run.Stderr, StringComparison.Ordinal);
        Assert.Contains("PolicyBadDuration,GeoDrive.Commands.TestCloudPolicyCommand", run.Stderr, StringComparison.Ordinal);
        Assert.Contains("policy check failed", run.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void A_folder_without_policies_fails_rather_than_passing_vacuously()
    {
        var empty = Path.Combine(_copy, "empty");
        Directory.CreateDirectory(empty);

        Assert.Equal(2, Gate("-PolicyRoot", empty).ExitCode);
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(_copy, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
