using System.Text.RegularExpressions;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Get-CloudPolicy and Get-CloudPolicyDecision against the real service, a mounted drive with two
/// layered policy files, and a file written through the mount.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class PolicyToolsTests(S3ServerFixture s3) : IAsyncLifetime
{
    private const string SiteYaml = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: site }
        spec:
          stubbing: { accessWait: 30d }
          upload: { settle: 0s }
          excludes: [ "*.tmp" ]
        """;

    private const string FinanceYaml = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: finance }
        spec:
          stubbing:
            accessWait: 7d
            rules:
              - { paths: [ "Active/**" ], pin: true }
          metadata:
            - { paths: [ "**/*.pdf" ], tags: { department: finance } }
          processExcludes:
            - { process: "backup*", recall: stream }
        """;

    private readonly ServiceProcess _service = new();
    private PowerShellSession _ps = null!;
    private DriveScenario _drive = null!;
    private string _finance = "";

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        _ps = new PowerShellSession(_service.SocketPath);
        _drive = new DriveScenario(s3, SiteYaml);
        _finance = Path.Combine(_drive.Root, "finance.yaml");
        await File.WriteAllTextAsync(_finance, FinanceYaml);
        var variables = _drive.Variables();
        variables["policy"] = new[] { _drive.PolicyPath, _finance };
        _ps.Invoke(DriveScenario.NewDriveScript, variables);
        Assert.Empty(_ps.LastErrors);
    }

    public async Task DisposeAsync()
    {
        _ps.Invoke("Remove-CloudDrive -Name $name -Confirm:$false", _drive.Variables());
        _ps.Dispose();
        await _service.DisposeAsync();
        _drive.Dispose();
    }

    private List<T> Run<T>(string script, object? path = null, string? process = null)
    {
        var variables = _drive.Variables();
        variables["p"] = path;
        variables["proc"] = process;
        var output = _ps.Invoke(script, variables).Select(o => (T)o.BaseObject).ToList();
        Assert.Empty(_ps.LastErrors);
        return output;
    }

    [Fact]
    public void The_files_are_listed_in_layer_order_in_force_with_the_load_time()
    {
        var files = Run<PolicyFileInfo>("Get-CloudPolicy -Drive $name");

        Assert.Equal([(1, _drive.PolicyPath, "site"), (2, _finance, "finance")], files.Select(f => (f.Order, f.Path, f.PolicyName!)));
        Assert.All(files, f => Assert.Equal("InForce", f.Status));
        Assert.All(files, f => Assert.True(f.LoadedAt > DateTimeOffset.UtcNow.AddMinutes(-5)));
    }

    [Fact]
    public void A_broken_save_shows_as_Invalid_with_the_first_problem_and_the_drive_keeps_answering()
    {
        File.WriteAllText(_finance, FinanceYaml.Replace("accessWait: 7d", "accessWait: 7days", StringComparison.Ordinal));

        var finance = Run<PolicyFileInfo>("Get-CloudPolicy -Drive $name").Single(f => f.Order == 2);

        Assert.Equal(("Invalid", "PolicyBadDuration"), (finance.Status, finance.ErrorId));
        Assert.StartsWith($"{_finance}:6:", finance.Problem, StringComparison.Ordinal);
        Assert.Equal(TimeSpan.FromDays(7), Run<PolicyDecisionInfo>("Get-CloudPolicyDecision -Drive $name -Path $p", "a.txt").Single().AccessWait);
    }

    [Fact]
    public void Effective_prints_each_value_with_the_file_and_line_it_came_from()
    {
        var settings = Run<PolicySettingInfo>("Get-CloudPolicy -Drive $name -Effective").ToDictionary(s => s.Setting);

        Assert.Equal(("7d", $"{_finance}:6:17", "finance"), (settings["spec.stubbing.accessWait"].Value, settings["spec.stubbing.accessWait"].Source, settings["spec.stubbing.accessWait"].Policy!));
        Assert.Equal(("0s", _drive.PolicyPath), (settings["spec.upload.settle"].Value, settings["spec.upload.settle"].File!));
        Assert.Equal(("5m", "(default)"), (settings["spec.upload.updateWait"].Value, settings["spec.upload.updateWait"].Source));
        Assert.Equal("*.tmp", settings["spec.excludes[0]"].Value);
        Assert.Equal("paths: [Active/**]; pin: true", settings["spec.stubbing.rules[0]"].Value);
    }

    [Fact]
    public async Task A_file_through_the_mount_gets_its_stub_time_from_its_last_access_and_its_tags_with_their_rule()
    {
        Directory.CreateDirectory(_drive.Mounted("Reports"));
        await File.WriteAllTextAsync(_drive.Mounted("Reports/q1.pdf"), "quarter");
        await DriveScenario.EventuallyAsync(
            () => Run<PolicyDecisionInfo>("Get-CloudPolicyDecision -Drive $name -Path $p", "Reports/q1.pdf").Single().State == "Cached", "q1.pdf Cached");

        var d = Run<PolicyDecisionInfo>("Get-CloudPolicyDecision -Drive $name -Path $p", "Reports/q1.pdf").Single();

        Assert.False(d.Excluded || d.Pinned);
        Assert.Equal(d.LastAccess + TimeSpan.FromDays(7), d.StubAfter);
        Assert.Equal("finance", d.Tags["department"]);
        var tag = d.Reasons.Single(r => r.Question == "Tag department");
        Assert.Equal(($"{_finance}:10", "finance"), (tag.Source[..tag.Source.LastIndexOf(':')], tag.Policy!));
        Assert.Contains("'**/*.pdf'", tag.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void A_pinned_path_is_never_stubbed_and_the_rule_is_named()
    {
        var d = Run<PolicyDecisionInfo>("Get-CloudPolicyDecision -Drive $name -Path $p", "Active/plan.xlsx").Single();

        Assert.True(d.Pinned);
        Assert.Null(d.StubAfter);
        Assert.Equal("never: pinned", d.Stubbing);
        var pinned = d.Reasons.Single(r => r.Question == "Pinned");
        Assert.Equal((_finance, 8), (pinned.File!, pinned.Line));
        Assert.Contains("'Active/**'", pinned.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void An_excluded_path_names_its_exclude_and_a_process_gets_its_treatment()
    {
        var d = Run<PolicyDecisionInfo>("Get-CloudPolicyDecision -Drive $name -Path $p -Process $proc", "Active/x.tmp", "backup-agent").Single();

        Assert.True(d.Excluded);
        Assert.False(d.Pinned);
        Assert.Equal((_drive.PolicyPath, 7), (d.Reasons.Single(r => r.Question == "Excluded").File!, d.Reasons.Single(r => r.Question == "Excluded").Line));
        Assert.Equal(("Stream", "Sync"), (d.Recall, d.FolderSync));
        Assert.Equal(_finance, d.Reasons.Single(r => r.Question == "Recall").File);
        Assert.Equal("(default)", d.Reasons.Single(r => r.Question == "FolderSync").Source);
    }

    [Fact]
    public void Effective_renders_as_one_table_of_setting_value_and_file_and_line()
    {
        var lines = Lines(Console($"Get-CloudPolicy -Drive {_drive.Name} -Effective"));

        Assert.Single(lines, l => Regex.IsMatch(l, @"^Setting\s+Value\s+Source$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^spec\.stubbing\.accessWait\s+7d\s+finance\.yaml:6:17$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, $@"^spec\.upload\.settle\s+0s\s+{Regex.Escape(Path.GetFileName(_drive.PolicyPath))}:\d+:\d+$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^spec\.upload\.updateWait\s+5m\s+\(default\)$"));
        Assert.DoesNotContain(lines, l => l.StartsWith("Setting ", StringComparison.Ordinal) && l.Contains(':', StringComparison.Ordinal));
    }

    [Fact]
    public void A_decision_renders_each_answer_as_a_table_row_with_its_file_and_line_and_no_type_names()
    {
        var text = Console($"Get-CloudPolicyDecision -Drive {_drive.Name} -Path Active/plan.xlsx -Process backup-agent");

        var lines = Lines(text);
        Assert.DoesNotContain("GeoDrive.", text, StringComparison.Ordinal);
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^Stubbing\s+: never: pinned$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^Question\s+Answer\s+Source\s+Reason$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^Pinned\s+yes\s+finance\.yaml:8:\d+\s+pinned by the rule for 'Active/\*\*'$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^AccessWait\s+7d\s+finance\.yaml:6:17\s+spec\.stubbing\.accessWait$"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^Recall\s+stream\s+finance\.yaml:12:\d+\s+the rule for process 'backup\*'"));
        Assert.Contains(lines, l => Regex.IsMatch(l, @"^FolderSync\s+sync\s+\(default\)\s+no matching rule sets it; the built-in default$"));
    }

    private static List<string> Lines(string text) => [.. text.Split('\n').Select(l => l.TrimEnd())];

    /// <summary>What an administrator sees in a console: the command run by scripts/gdpwsh, its output formatted by GeoDrive.Format.ps1xml.</summary>
    private string Console(string command)
    {
        var psi = new System.Diagnostics.ProcessStartInfo("bash",
            [Path.Combine(RepoRoot.Path, "scripts", "gdpwsh"), "-NoProfile", "-Command", $"Import-Module '{Path.Combine(RepoRoot.Path, "GeoDrive.psd1")}'; {command}"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        psi.Environment["GEODRIVE_USE_PSHOST"] = "1";
        psi.Environment["GEODRIVE_SOCKET"] = _service.SocketPath;
        using var process = System.Diagnostics.Process.Start(psi)!;
        var stderr = process.StandardError.ReadToEndAsync();
        var text = process.StandardOutput.ReadToEnd();
        Assert.True(process.WaitForExit(TimeSpan.FromSeconds(90)));
        Assert.True(process.ExitCode == 0, text + stderr.Result);
        return text;
    }

    [Fact]
    public void An_unknown_drive_is_DriveNotFound()
    {
        var error = _ps.InvokeExpectingError("Get-CloudPolicy -Drive no-such-drive");
        Assert.Equal("DriveNotFound,GeoDrive.Commands.GetCloudPolicyCommand", error.FullyQualifiedErrorId);
        var decision = _ps.InvokeExpectingError("Get-CloudPolicyDecision -Drive no-such-drive -Path a.txt");
        Assert.Equal("DriveNotFound,GeoDrive.Commands.GetCloudPolicyDecisionCommand", decision.FullyQualifiedErrorId);
    }
}
