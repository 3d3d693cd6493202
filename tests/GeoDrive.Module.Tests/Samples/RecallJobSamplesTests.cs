using System.Diagnostics;
using System.Management.Automation;
using System.Management.Automation.Language;

namespace GeoDrive.Module.Tests;

/// <summary>samples/jobs stays usable: the policy loads, the scripts parse and bind, the systemd units verify.</summary>
[Collection(ModuleCollection.Name)]
public sealed class RecallJobSamplesTests(ModuleSession session)
{
    private static readonly string Samples = RepoRoot.Combine("samples", "jobs");

    [Fact]
    public void The_policy_sample_passes_Test_CloudPolicy_and_declares_the_morning_prewarm()
    {
        var path = Path.Combine(Samples, "morning-prewarm.yaml");
        var ok = session.Invoke("Test-CloudPolicy -Path $p", new Dictionary<string, object?> { ["p"] = path }).Single();
        Assert.True((bool)ok.BaseObject, string.Join("; ", session.LastErrors.Select(e => e.Exception.Message)));
        Assert.Contains("schedule: \"0 6 * * 1-5\"", File.ReadAllText(path), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("Register-MorningPrewarm.ps1")]
    [InlineData("Invoke-Prewarm.ps1")]
    [InlineData("windows/Register-PrewarmTask.ps1")]
    public void Each_script_parses_and_its_GeoDrive_commands_use_parameters_they_have(string script)
    {
        var ast = Parser.ParseFile(Path.Combine(Samples, script), out _, out var errors);
        Assert.Empty(errors);
        foreach (var call in ast.FindAll(a => a is CommandAst, true).Cast<CommandAst>())
        {
            var name = call.GetCommandName();
            if (name is null || !name.Contains("-Cloud", StringComparison.Ordinal))
            {
                continue;
            }
            var cmdlet = session.Command(name);
            foreach (var parameter in call.CommandElements.OfType<CommandParameterAst>())
            {
                Assert.True(cmdlet.Parameters.ContainsKey(parameter.ParameterName), $"{script}: {name} has no -{parameter.ParameterName}");
            }
        }
    }

    [Fact]
    public void The_registration_script_run_with_WhatIf_registers_nothing_and_binds()
    {
        // The script imports GeoDrive only when it is not loaded; the session has it from ./GeoDrive.psd1.
        session.Invoke("& $s -Drive finance -TimeZone UTC -WhatIf", new Dictionary<string, object?> { ["s"] = Path.Combine(Samples, "Register-MorningPrewarm.ps1") });
        Assert.Empty(session.LastErrors);
    }

    [Fact]
    public void The_systemd_units_verify()
    {
        var units = new[] { "geodrive-prewarm.service", "geodrive-prewarm.timer" }.Select(u => Path.Combine(Samples, "systemd", u)).ToArray();
        var service = File.ReadAllText(units[0]);
        var timer = File.ReadAllText(units[1]);
        // Structural: what makes the pair work, whether or not systemd is here to verify it.
        Assert.Contains("[Service]", service, StringComparison.Ordinal);
        Assert.Contains("Type=oneshot", service, StringComparison.Ordinal);
        Assert.Contains("ExecStart=/usr/bin/pwsh -NoProfile -NonInteractive -File /usr/local/lib/geodrive/Invoke-Prewarm.ps1", service, StringComparison.Ordinal);
        Assert.Contains("OnCalendar=Mon..Fri *-*-* 06:00:00", timer, StringComparison.Ordinal);
        Assert.Contains("Persistent=true", timer, StringComparison.Ordinal);
        Assert.Contains("Unit=geodrive-prewarm.service", timer, StringComparison.Ordinal);
        Assert.Contains("WantedBy=timers.target", timer, StringComparison.Ordinal);

        if (!File.Exists("/usr/bin/systemd-analyze"))
        {
            return;
        }
        var calendar = Run("systemd-analyze", "calendar", "Mon..Fri *-*-* 06:00:00");
        Assert.True(calendar.ExitCode == 0, calendar.Output);
        // verify needs the ExecStart binary; pwsh is not installed here, so verify a copy pointing at /bin/true.
        var copy = Path.Combine(Path.GetTempPath(), "geodrive-test", "units-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(copy);
        try
        {
            File.WriteAllText(Path.Combine(copy, "geodrive-prewarm.service"), File.Exists("/usr/bin/pwsh") ? service : service.Replace("/usr/bin/pwsh", "/bin/true", StringComparison.Ordinal));
            File.WriteAllText(Path.Combine(copy, "geodrive-prewarm.timer"), timer);
            var verify = Run("systemd-analyze", "verify", "--man=no", Path.Combine(copy, "geodrive-prewarm.timer"), Path.Combine(copy, "geodrive-prewarm.service"));
            // geodrive.service itself is not installed on a build machine: only that may be reported.
            var problems = verify.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
                .Where(l => !l.Contains("Unit geodrive.service not found", StringComparison.Ordinal))
                .Where(l => !l.Contains("System has not been booted with systemd", StringComparison.Ordinal) && !l.Contains("Failed to connect to bus", StringComparison.Ordinal))
                .ToList();
            Assert.True(problems.Count == 0, string.Join("\n", problems));
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    private static (int ExitCode, string Output) Run(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(file, args) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, stdout.Result + stderr);
    }
}
