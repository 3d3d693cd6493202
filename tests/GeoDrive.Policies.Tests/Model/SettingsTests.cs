using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;
using GeoDrive.Policies.Tests.Schema;

namespace GeoDrive.Policies.Tests.Model;

/// <summary>EffectivePolicy.Settings (Get-CloudPolicy -Effective) and the tag and process explanations (Get-CloudPolicyDecision).</summary>
public sealed class SettingsTests
{
    private static readonly string FinancePath = RepoFiles.Policy("examples", "finance-archive.yaml");
    private static readonly EffectivePolicy Finance = EffectivePolicy.Merge([PolicyLoader.Load(FinancePath)]);

    // Keys whose value is a list of plain values rather than one value or a list of maps.
    private static readonly string[] ValueLists = ["spec.excludes"];

    [Fact]
    public void Every_single_value_the_loader_accepts_is_printed_with_its_default()
    {
        var scalars = LoaderKeys.Sections
            .Where(s => s.Key.StartsWith("spec", StringComparison.Ordinal) && !s.Key.Contains("[]", StringComparison.Ordinal))
            .SelectMany(s => s.Value.Select(k => $"{s.Key}.{k}"))
            .Where(k => !LoaderKeys.Sections.ContainsKey(k) && !LoaderKeys.Sections.ContainsKey(k + "[]") && !ValueLists.Contains(k))
            .Order(StringComparer.Ordinal);

        var printed = EffectivePolicy.Defaults.Settings();

        Assert.Equal(scalars, printed.Select(s => s.Key).Order(StringComparer.Ordinal));
        Assert.All(printed, s => Assert.True(s.Origin.IsDefault, s.ToString()));
        Assert.Contains(printed, s => s is { Key: "spec.stubbing.accessWait", Value: "30d" });
    }

    [Fact]
    public void Every_value_and_list_entry_names_the_file_and_line_it_came_from()
    {
        var settings = Finance.Settings().ToDictionary(s => s.Key);

        Assert.Equal(("30d", new SourceLocation(FinancePath, 6, 53)), (settings["spec.stubbing.accessWait"].Value, settings["spec.stubbing.accessWait"].Origin));
        Assert.Equal("paths: [Active/**]; pin: true", settings["spec.stubbing.rules[0]"].Value);
        Assert.Equal("**/Thumbs.db", settings["spec.excludes[2]"].Value);
        Assert.Equal("process: backup*; recall: stream", settings["spec.processExcludes[1]"].Value);
        Assert.StartsWith("days: [Mon, Tue, Wed, Thu, Fri]; from: 08:00; to: 18:00; upload: ", settings["spec.throttle.schedule[0]"].Value, StringComparison.Ordinal);
        Assert.Equal("name: morning-prewarm; paths: [Active/**]; schedule: \"0 6 * * 1-5\"", settings["spec.recallJobs[0]"].Value);
        Assert.True(settings["spec.transfer.restoreThreads"].Origin.Line > 0);
        Assert.True(settings["spec.stubbing.minimumSize"].Origin.Line > 0);
    }

    [Fact]
    public void A_process_treatment_names_the_rule_for_each_setting()
    {
        var backup = new PolicyEvaluator(Finance).ExplainProcess("backup-agent");

        Assert.Equal(RecallAction.Stream, backup.Recall.Value);
        Assert.Equal(FinancePath, backup.Recall.Origin!.File);
        Assert.Contains("'backup*'", backup.Recall.Reason, StringComparison.Ordinal);
        Assert.Equal(SyncAction.Sync, backup.FolderSync.Value);
        Assert.Null(backup.FolderSync.Origin);

        var word = new PolicyEvaluator(Finance).ExplainProcess("winword.exe");
        Assert.Null(word.Recall.Origin);
        Assert.Contains("no process rule matches", word.Recall.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Tags_name_the_metadata_rule_that_set_them()
    {
        var tags = new PolicyEvaluator(Finance).ExplainTags("Reports/2024/q1.pdf").ToDictionary(t => t.Name, t => t.Decision);

        Assert.Equal(["department", "retention"], tags.Keys.Order(StringComparer.Ordinal));
        Assert.Equal("7y", tags["retention"].Value);
        Assert.Equal(FinancePath, tags["retention"].Origin!.File);
        Assert.Empty(new PolicyEvaluator(Finance).ExplainTags("Reports/2024/q1.xlsx"));
    }
}
