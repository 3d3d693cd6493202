using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests.Evaluation;

public sealed class PolicyEvaluatorTests
{
    private static readonly PolicyEvaluator Finance =
        new(EffectivePolicy.Merge([PolicyLoader.Load(RepoFiles.Policy("examples", "finance-archive.yaml"))]));

    private static PolicyEvaluator Evaluator(params string[] specs) =>
        new(EffectivePolicy.Merge(specs.Select((spec, i) => PolicyLoader.Parse($"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: {"{"} name: layer{i} {"}"}
            {spec}
            """, $"layer{i}.yaml"))));

    [Theory]
    [InlineData("Reports/~$Budget.xlsx", true)]
    [InlineData("~$Budget.xlsx", true)]
    [InlineData("a/b/c.tmp", true)]
    [InlineData("Photos/Thumbs.db", true)]
    [InlineData("Scratch/notes.txt", true)]
    [InlineData("Scratch/deep/down/notes.txt", true)]
    [InlineData("Scratch", false)]
    [InlineData("Reports/Budget.xlsx", false)]
    [InlineData("Scratchpad/x.txt", false)]
    public void Excluded_files_are_those_an_exclude_or_an_excluded_folder_names(string path, bool excluded) =>
        Assert.Equal(excluded, Finance.IsExcluded(path, isDirectory: false));

    [Fact]
    public void An_excluded_folder_is_excluded_itself()
    {
        Assert.True(Finance.IsExcluded("Scratch", isDirectory: true));
        Assert.True(Evaluator("spec:\n  excludes: [ node_modules ]\n").IsExcluded("web/node_modules/a/b.js", isDirectory: false));
    }

    [Theory]
    [InlineData("Active/plan.docx", true)]
    [InlineData("Active/2026/plan.docx", true)]
    [InlineData("active/PLAN.docx", true)]
    [InlineData("Archive/plan.docx", false)]
    public void Pinned_files_are_those_a_pin_rule_names(string path, bool pinned) =>
        Assert.Equal(pinned, Finance.IsPinned(path));

    [Fact]
    public void A_later_pin_false_rule_unpins_part_of_a_pinned_folder()
    {
        var e = Evaluator("spec:\n  stubbing:\n    rules:\n      - { paths: [\"Active/**\"], pin: true }\n      - { paths: [\"Active/Old/\"], pin: false }\n");
        Assert.True(e.IsPinned("Active/x"));
        Assert.False(e.IsPinned("Active/Old/x"));
    }

    [Fact]
    public void An_excluded_file_is_never_pinned()
    {
        var e = Evaluator("spec:\n  excludes: [ \"*.tmp\" ]\n  stubbing: { rules: [ { paths: [\"Active/**\"], pin: true } ] }\n");
        Assert.True(e.IsPinned("Active/a.doc"));
        Assert.False(e.IsPinned("Active/a.tmp"));
    }

    [Fact]
    public void The_last_applying_access_wait_rule_wins_else_the_default()
    {
        var e = Evaluator(
            "spec:\n  stubbing:\n    accessWait: 10d\n    rules:\n      - { paths: [\"**/*.iso\"], accessWait: 1d }\n      - { paths: [\"Keep/**\"], accessWait: 90d }\n",
            "spec:\n  stubbing:\n    rules:\n      - { paths: [\"Keep/Fast/\"], accessWait: 1h }\n");

        Assert.Equal(TimeSpan.FromDays(10), e.AccessWaitFor("a/b.doc"));
        Assert.Equal(TimeSpan.FromDays(1), e.AccessWaitFor("a/b.iso"));
        Assert.Equal(TimeSpan.FromDays(90), e.AccessWaitFor("Keep/b.iso"));
        Assert.Equal(TimeSpan.FromHours(1), e.AccessWaitFor("Keep/Fast/b.iso"));
        Assert.Equal(TimeSpan.FromDays(30), Evaluator("spec: {}").AccessWaitFor("x"));
    }

    [Fact]
    public void The_scalar_settings_come_from_the_merged_policy()
    {
        Assert.True(Finance.StubbingEnabled);
        Assert.Equal(64 * 1024, Finance.MinimumSize);
        Assert.Equal(TimeSpan.FromSeconds(30), Finance.Settle);
        Assert.Equal(UploadMode.Async, Finance.Mode);
        Assert.Equal(TimeSpan.FromMinutes(5), Finance.UpdateWait);
        Assert.Equal(PeerChangeAction.Stub, Finance.PeerChanges);

        var e = Evaluator("spec:\n  upload: { mode: sync, settle: 0s, updateWait: 1m, peerChanges: recall }\n  stubbing: { enabled: false, minimumSize: 1MiB }\n");
        Assert.Equal(PeerChangeAction.Recall, e.PeerChanges);
        Assert.Equal(UploadMode.Sync, e.Mode);
        Assert.Equal(TimeSpan.Zero, e.Settle);
        Assert.Equal(TimeSpan.FromMinutes(1), e.UpdateWait);
        Assert.False(e.StubbingEnabled);
        Assert.Equal(1 << 20, e.MinimumSize);
    }

    [Fact]
    public void Tags_come_from_every_applying_metadata_rule_later_values_winning()
    {
        Assert.Equal(new Dictionary<string, string> { ["department"] = "finance", ["retention"] = "7y" }, Finance.TagsFor("Invoices/2024/a.PDF"));
        Assert.Empty(Finance.TagsFor("Invoices/2024/a.xlsx"));

        var e = Evaluator("spec:\n  metadata:\n    - { paths: [\"**\"], tags: { owner: it, retention: 1y } }\n    - { paths: [\"Legal/\"], tags: { retention: 10y } }\n");
        Assert.Equal(new Dictionary<string, string> { ["owner"] = "it", ["retention"] = "10y" }, e.TagsFor("Legal/contract.pdf"));
    }

    [Fact]
    public void Object_tags_come_only_from_rules_with_objectTags_true_at_most_ten()
    {
        var e = Evaluator("spec:\n  metadata:\n    - { paths: [\"**\"], tags: { owner: it } }\n    - { paths: [\"Legal/\"], tags: { retention: 10y }, objectTags: true }\n");
        Assert.Equal(new Dictionary<string, string> { ["retention"] = "10y" }, e.ObjectTagsFor("Legal/contract.pdf"));
        Assert.Empty(e.ObjectTagsFor("Other/contract.pdf"));
        Assert.Equal(new Dictionary<string, string> { ["owner"] = "it", ["retention"] = "10y" }, e.TagsFor("Legal/contract.pdf"));

        var many = string.Join(", ", Enumerable.Range(0, 10).Select(i => $"t{i}: v"));
        var twelve = Evaluator($"spec:\n  metadata:\n    - {{ paths: [\"**\"], tags: {{ {many} }}, objectTags: true }}\n    - {{ paths: [\"**\"], tags: {{ t0: w, extra: x }}, objectTags: true }}\n");
        var tags = twelve.ObjectTagsFor("a.bin");
        Assert.Equal(10, tags.Count);
        Assert.Equal("w", tags["t0"]);
        Assert.False(tags.ContainsKey("extra"));
    }

    [Fact]
    public void Processes_are_treated_by_their_rules_and_otherwise_normally()
    {
        Assert.Equal(new ProcessTreatment(SyncAction.Skip, SyncAction.Skip, SyncAction.Skip, RecallAction.Deny), Finance.ProcessTreatmentFor("msmpeng.exe"));
        Assert.Equal(RecallAction.Stream, Finance.ProcessTreatmentFor("backup-agent").Recall);
        Assert.Equal(SyncAction.Sync, Finance.ProcessTreatmentFor("backup-agent").FolderSync);
        Assert.Equal(ProcessTreatment.Default, Finance.ProcessTreatmentFor("winword.exe"));
    }

    [Fact]
    public void Throttle_limits_follow_the_schedule_windows()
    {
        var monday10 = new DateTime(2026, 1, 5, 10, 0, 0);
        var monday18 = new DateTime(2026, 1, 5, 18, 0, 0);
        var saturday10 = new DateTime(2026, 1, 10, 10, 0, 0);
        Assert.Equal((20_000_000L, 400_000_000L), Finance.ThrottleAt(monday10));
        Assert.Equal((100_000_000L, 400_000_000L), Finance.ThrottleAt(monday18));
        Assert.Equal((100_000_000L, 400_000_000L), Finance.ThrottleAt(saturday10));
    }

    [Fact]
    public void Explain_names_the_file_and_line_that_decided()
    {
        var path = RepoFiles.Policy("examples", "finance-archive.yaml");

        var tmp = Finance.Explain("Active/a.tmp");
        Assert.True(tmp.Excluded.Value);
        Assert.Equal(new SourceLocation(path, 11, 36), tmp.Excluded.Origin);
        Assert.Contains("'**/*.tmp'", tmp.Excluded.Reason, StringComparison.Ordinal);
        Assert.False(tmp.Pinned.Value);

        var active = Finance.Explain("Active/plan.docx");
        Assert.False(active.Excluded.Value);
        Assert.Null(active.Excluded.Origin);
        Assert.True(active.Pinned.Value);
        Assert.Equal(path, active.Pinned.Origin!.File);
        Assert.Equal(7, active.Pinned.Origin.Line);
        Assert.Contains("'Active/**'", active.Pinned.Reason, StringComparison.Ordinal);

        var iso = Finance.Explain("Images/x.iso");
        Assert.Equal(TimeSpan.FromDays(1), iso.AccessWait.Value);
        Assert.Equal(8, iso.AccessWait.Origin!.Line);

        var doc = Finance.Explain("Reports/a.docx");
        Assert.Equal(TimeSpan.FromDays(30), doc.AccessWait.Value);
        Assert.Equal(6, doc.AccessWait.Origin!.Line);
        Assert.Contains("spec.stubbing.accessWait", doc.AccessWait.ToString(), StringComparison.Ordinal);

        var defaults = new PolicyEvaluator(EffectivePolicy.Defaults).Explain("x");
        Assert.Null(defaults.AccessWait.Origin);
        Assert.Equal("30d (the built-in default)", defaults.AccessWait.ToString());
        Assert.Contains("x: excluded no", defaults.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void The_evaluator_works_with_the_shape_the_engine_tests_use()
    {
        // tests/GeoDrive.Engine.Tests/DriveRig.cs builds its evaluator from this text.
        var e = new PolicyEvaluator(EffectivePolicy.Merge([PolicyLoader.Parse("""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: engine-tests }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 30s }
              excludes: [ "**/*.tmp", "Scratch/" ]
            """, "test-policy.yaml")]));
        Assert.Equal(TimeSpan.FromHours(1), e.AccessWaitFor("a.txt"));
        Assert.True(e.IsExcluded("x/y.tmp", isDirectory: false));
        Assert.True(e.IsExcluded("Scratch/y.txt", isDirectory: false));
        Assert.False(e.IsExcluded("y.txt", isDirectory: false));
    }
}
