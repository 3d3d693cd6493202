using GeoDrive.Core.Errors;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Policies.Tests.Loading;

public sealed class PolicyLoaderTests
{
    private const string Header = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: test }

        """;

    private static PolicyException Refused(string yaml) =>
        Assert.Throws<PolicyException>(() => PolicyLoader.Parse(yaml, "p.yaml"));

    private static PolicyProblem FirstProblem(string spec) => Refused(Header + spec).Problems[0];

    [Fact]
    public void Every_key_of_the_format_is_read_with_its_value_and_origin()
    {
        var path = RepoFiles.Fixture("good", "everything-block-style.yaml");
        var doc = PolicyLoader.Load(path);

        Assert.Equal(path, doc.File);
        Assert.Equal("everything", doc.Name.Value);
        Assert.Equal("Every key, block style", doc.Description!.Value);

        Assert.False(doc.Stubbing.Enabled!.Value);
        Assert.Equal(TimeSpan.FromMinutes(90), doc.Stubbing.AccessWait!.Value);
        Assert.Equal(new SourceLocation(path, 10, 17), doc.Stubbing.AccessWait.Origin);
        Assert.Equal(1_500_000, doc.Stubbing.MinimumSize!.Value);
        Assert.Equal(3, doc.Stubbing.Rules.Count);
        Assert.True(doc.Stubbing.Rules[0].Pin!.Value);
        Assert.Equal(["**/*.{iso,img}", "Media/[0-9][0-9][0-9][0-9]/**"], doc.Stubbing.Rules[1].Paths.Select(p => p.Pattern));
        Assert.Equal(17, doc.Stubbing.Rules[1].Paths[1].Origin.Line);
        Assert.Equal(TimeSpan.FromDays(2), doc.Stubbing.Rules[1].AccessWait!.Value);
        Assert.False(doc.Stubbing.Rules[2].Pin!.Value);

        Assert.Equal(CacheLevel.OfBytes(500L << 30), doc.CacheThresholds.StubAbove!.Value);
        Assert.Equal(CacheLevel.OfBytes(400L << 30), doc.CacheThresholds.StubUntil!.Value);
        Assert.Equal(CacheLevel.OfPercent(5), doc.CacheThresholds.ReserveFree!.Value);

        Assert.Equal(UploadMode.Sync, doc.Upload.Mode!.Value);
        Assert.Equal(TimeSpan.Zero, doc.Upload.Settle!.Value);
        Assert.Equal(TimeSpan.Zero, doc.Upload.UpdateWait!.Value);

        Assert.Equal(["*.bak", "Build/"], doc.Excludes.Select(e => e.Pattern));
        Assert.Equal(new SourceLocation(path, 30, 7), doc.Excludes[0].Origin);

        Assert.Equal("10y", doc.Metadata[0].Tags["retention"].Value);
        Assert.Equal("document", doc.Metadata[1].Tags["kind"].Value);

        Assert.Equal(RecallAction.Stream, doc.ProcessExcludes[0].Recall!.Value);
        Assert.Null(doc.ProcessExcludes[0].FolderSync);
        Assert.Equal(SyncAction.Skip, doc.ProcessExcludes[1].FolderSync!.Value);
        Assert.Equal(SyncAction.Sync, doc.ProcessExcludes[1].FileSync!.Value);
        Assert.Equal(SyncAction.Skip, doc.ProcessExcludes[1].FileNotFound!.Value);
        Assert.Null(doc.ProcessExcludes[1].Recall);
        Assert.True(doc.ProcessExcludes[0].Process.Value.IsMatch("BackupAgent.exe"));

        Assert.Equal(1L << 30, doc.Throttle.Upload!.Value);
        Assert.Equal(0, doc.Throttle.Download!.Value);
        Assert.Equal([DayOfWeek.Sunday, DayOfWeek.Saturday], doc.Throttle.Schedule[0].Days.Order());
        Assert.Equal(TimeSpan.FromHours(24), doc.Throttle.Schedule[0].To);
        Assert.Equal(50L << 20, doc.Throttle.Schedule[0].Download!.Value);
        Assert.Null(doc.Throttle.Schedule[0].Upload);
        Assert.Equal(new TimeSpan(9, 0, 0), doc.Throttle.Schedule[1].From);
        Assert.Equal(new TimeSpan(12, 30, 0), doc.Throttle.Schedule[1].To);

        Assert.Equal(16, doc.Transfer.UploadThreads!.Value);
        Assert.Equal(32, doc.Transfer.RestoreThreads!.Value);
        Assert.Equal(32L << 20, doc.Transfer.Multipart.Threshold!.Value);
        Assert.Equal(8L << 20, doc.Transfer.Multipart.PartSize!.Value);
        Assert.Equal(8, doc.Transfer.Multipart.UploadThreads!.Value);
        Assert.Equal(6, doc.Transfer.Multipart.RestoreThreads!.Value);

        Assert.Equal(["monday-prewarm", "month-end"], doc.RecallJobs.Select(j => j.Name.Value));
        Assert.Equal("0 */2 28-31 * *", doc.RecallJobs[1].Schedule.Value.Expression);
        Assert.Null(doc.RecallJobs[0].TimeZone);
        Assert.Equal("Europe/Berlin", doc.RecallJobs[1].TimeZone!.Value);
    }

    [Fact]
    public void A_file_that_says_nothing_leaves_every_value_unset()
    {
        var doc = PolicyLoader.Load(RepoFiles.Fixture("good", "minimal.yaml"));
        Assert.Null(doc.Stubbing.AccessWait);
        Assert.Null(doc.Upload.Settle);
        Assert.Empty(doc.Excludes);
        Assert.Null(doc.Description);
    }

    [Fact]
    public void Empty_sections_are_allowed()
    {
        var doc = PolicyLoader.Parse(Header + "spec:\n  stubbing:\n  excludes:\n", "p.yaml");
        Assert.Empty(doc.Excludes);
        Assert.Null(doc.Stubbing.Enabled);
    }

    [Fact]
    public void An_unknown_key_is_refused_with_its_place_and_the_closest_known_key()
    {
        var ex = Refused(Header + "spec:\n  stubbing: { enabled: true, acessWait: 30d }\n");

        Assert.Equal(ErrorIds.PolicyUnknownKey, ex.ErrorId);
        Assert.Equal((5, 30), (ex.Line, ex.Column));
        Assert.Equal("p.yaml:5:30: unknown key 'acessWait' at spec.stubbing; did you mean 'accessWait'?", ex.Message);
        Assert.Contains("docs/policies.md", ex.Remedy, StringComparison.Ordinal);
        Assert.Equal(ex.Message + " " + ex.Remedy, ex.FullMessage);
        Assert.Equal(ErrorKind.InvalidData, ex.Kind);
    }

    [Theory]
    [InlineData("spec:\n  Stubbing: {}\n", "did you mean 'stubbing'?")]
    [InlineData("spec:\n  upload: { setle: 30s }\n", "did you mean 'settle'?")]
    [InlineData("spec:\n  exclude: []\n", "did you mean 'excludes'?")]
    [InlineData("spec:\n  transfer: { multiPart: {} }\n", "did you mean 'multipart'?")]
    [InlineData("spec:\n  colour: blue\n", "the keys allowed here are stubbing, cacheThresholds")]
    [InlineData("spec: {}\nspecs: {}\n", "unknown key 'specs' at the top level; did you mean 'spec'?")]
    public void Misspelt_keys_get_a_suggestion_when_one_is_close(string spec, string expected) =>
        Assert.Contains(expected, FirstProblem(spec).Message, StringComparison.Ordinal);

    [Fact]
    public void Every_problem_in_a_file_is_reported_in_file_order_not_just_the_first()
    {
        const string yaml = """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: many }
            spec:
              upload: { settle: 30x, mode: fast }
              stubbing: { minimumSize: 12 apples }
              excludes: [ "[oops" ]
              colour: blue
            """;
        var problems = PolicyLoader.ValidateText(yaml, "many.yaml");

        Assert.Equal(
            [
                (ErrorIds.PolicyBadDuration, 5, 21),
                (ErrorIds.PolicyBadValue, 5, 32),
                (ErrorIds.PolicyBadSize, 6, 28),
                (ErrorIds.PolicyBadGlob, 7, 15),
                (ErrorIds.PolicyUnknownKey, 8, 3),
            ],
            problems.Select(p => (p.ErrorId, p.Line, p.Column)));
        Assert.All(problems, p => Assert.Equal("many.yaml", p.File));

        var ex = Assert.Throws<PolicyException>(() => PolicyLoader.Parse(yaml, "many.yaml"));
        Assert.Equal(problems, ex.Problems);
        Assert.EndsWith("(and 4 more problems in the file)", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Validate_of_a_good_file_returns_no_problems()
    {
        Assert.Empty(PolicyLoader.Validate(RepoFiles.Fixture("good", "everything-block-style.yaml")));
        Assert.Empty(PolicyLoader.ValidateText(Header + "spec: {}", "x.yaml"));
    }

    [Fact]
    public void A_missing_file_is_refused_as_PolicyFileNotFound()
    {
        using var temp = new TempDirectory("policies");
        var path = temp.Combine("nope.yaml");

        var ex = Assert.Throws<PolicyException>(() => PolicyLoader.Load(path));
        Assert.Equal(ErrorIds.PolicyFileNotFound, ex.ErrorId);
        Assert.Equal(ErrorKind.ObjectNotFound, ex.Kind);
        Assert.Equal((path, 0, 0), (ex.File, ex.Line, ex.Column));
        Assert.StartsWith(path + ": ", ex.Message, StringComparison.Ordinal);

        var problem = Assert.Single(PolicyLoader.Validate(path));
        Assert.Equal(ErrorIds.PolicyFileNotFound, problem.ErrorId);

        Assert.Equal(ErrorIds.PolicyFileNotFound, Assert.Single(PolicyLoader.Validate(temp.Path)).ErrorId);
    }

    [Fact]
    public void A_file_is_loaded_from_disk_with_its_path_in_every_origin()
    {
        using var temp = new TempDirectory("policies");
        var path = temp.Combine("p.yaml");
        File.WriteAllText(path, Header + "spec:\n  upload:\n    settle: 2s\n");

        var doc = PolicyLoader.Load(path);
        Assert.Equal(new SourceLocation(path, 6, 13), doc.Upload.Settle!.Origin);
        Assert.Equal($"{path}:6:13", doc.Upload.Settle.Origin.ToString());
    }

    [Theory]
    [InlineData("", ErrorIds.PolicySyntax, 1, 1, "empty")]
    [InlineData("# only a comment\n", ErrorIds.PolicySyntax, 1, 1, "empty")]
    [InlineData("- a\n- b\n", ErrorIds.PolicyWrongType, 1, 1, "must be a map")]
    [InlineData("apiVersion: geodrive/v1\n---\napiVersion: geodrive/v1\n", ErrorIds.PolicySyntax, 3, 1, "more than one YAML document")]
    [InlineData("kind: CloudDrivePolicy\nmetadata: { name: x }\nspec: {}\n", ErrorIds.PolicyMissingKey, 1, 1, "has no 'apiVersion'")]
    [InlineData("apiVersion: geodrive/v1\nmetadata: { name: x }\nspec: {}\n", ErrorIds.PolicyMissingKey, 1, 1, "has no 'kind'")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nspec: {}\n", ErrorIds.PolicyMissingKey, 1, 1, "has no 'metadata'")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: 'two words' }\nspec: {}\n", ErrorIds.PolicyBadValue, 3, 19, "may hold only letters")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: [x] }\nspec: {}\n", ErrorIds.PolicyWrongType, 3, 19, "must be a string")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: x }\nspec: [ ]\n", ErrorIds.PolicyWrongType, 4, 7, "spec must be a map")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: x }\nspec:\n  excludes: [ *.tmp ]\n", ErrorIds.PolicySyntax, 5, 15, "'*.tmp' starts with '*'")]
    [InlineData("apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: x }\nspec:\n  upload:\n    settle: 30s\n   mode: async\n", ErrorIds.PolicySyntax, 7, 4, "not valid YAML")]
    public void The_shape_of_the_file_is_checked(string yaml, string id, int line, int column, string words)
    {
        var problem = Refused(yaml).Problems[0];
        Assert.Equal((id, line, column), (problem.ErrorId, problem.Line, problem.Column));
        Assert.Contains(words, problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_duplicate_key_names_the_key()
    {
        var problem = FirstProblem("spec:\n  upload:\n    settle: 30s\n    settle: 1m\n");
        Assert.Equal(ErrorIds.PolicySyntax, problem.ErrorId);
        Assert.Contains("'settle' appears twice", problem.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_tab_in_the_indentation_is_named_as_the_cause()
    {
        var problem = FirstProblem("spec:\n  upload:\n\tsettle: 30s\n");
        Assert.Equal((ErrorIds.PolicySyntax, 6, 1), (problem.ErrorId, problem.Line, problem.Column));
        Assert.Contains("tab", problem.Message, StringComparison.Ordinal);
    }

    // spec text (after the header, so line 5 is the first spec line), id, line, column, words in the message
    public static TheoryData<string, string, int, int, string> ValueProblems() => new()
    {
        { "spec:\n  stubbing: { enabled: yes }\n", ErrorIds.PolicyWrongType, 5, 24, "yes/no/on/off are not accepted" },
        { "spec:\n  stubbing: { enabled: }\n", ErrorIds.PolicyWrongType, 5, 24, "is nothing" },
        { "spec:\n  stubbing: { accessWait: [30d] }\n", ErrorIds.PolicyWrongType, 5, 27, "must be a duration but is a list" },
        { "spec:\n  stubbing: true\n", ErrorIds.PolicyWrongType, 5, 13, "must be a map" },
        { "spec:\n  stubbing: { rules: { paths: [a] } }\n", ErrorIds.PolicyWrongType, 5, 22, "must be a list" },
        { "spec:\n  stubbing: { rules: [ { pin: true } ] }\n", ErrorIds.PolicyMissingKey, 5, 24, "has no 'paths'" },
        { "spec:\n  stubbing: { rules: [ { paths: [], pin: true } ] }\n", ErrorIds.PolicyBadValue, 5, 33, "is empty" },
        { "spec:\n  stubbing: { rules: [ { paths: \"a/**\", pin: true } ] }\n", ErrorIds.PolicyWrongType, 5, 33, "must be a list" },
        { "spec:\n  stubbing: { rules: [ { paths: [a], pin: false, accessWait: 1d } ] }\n", "", 0, 0, "" },
        { "spec:\n  cacheThresholds: { stubAbove: 70% }\n", ErrorIds.PolicyBadValue, 5, 33, "stubUntil (80%, the default) must be below stubAbove (70%)" },
        { "spec:\n  cacheThresholds: { stubAbove: 500GiB, stubUntil: 600GiB }\n", ErrorIds.PolicyBadValue, 5, 52, "must be below" },
        { "spec:\n  cacheThresholds: { stubAbove: 500GiB, stubUntil: 50% }\n", "", 0, 0, "" },
        { "spec:\n  cacheThresholds: { reserveFree: plenty }\n", ErrorIds.PolicyBadSize, 5, 35, "neither a percentage" },
        { "spec:\n  upload: { mode: Sync }\n", "", 0, 0, "" },
        { "spec:\n  upload: { mode: syncc }\n", ErrorIds.PolicyBadValue, 5, 19, "did you mean 'sync'?" },
        { "spec:\n  upload: { peerChanges: recall }\n", "", 0, 0, "" },
        { "spec:\n  upload: { peerChanges: restore }\n", ErrorIds.PolicyBadValue, 5, 26, "not one of stub, recall" },
        { "spec:\n  excludes: [ 42 ]\n", "", 0, 0, "" },
        { "spec:\n  excludes: [ { a: b } ]\n", ErrorIds.PolicyWrongType, 5, 15, "must be a path pattern but is a map" },
        { "spec:\n  metadata: [ { paths: [a], tags: {} } ]\n", ErrorIds.PolicyBadValue, 5, 35, "at least one tag" },
        { "spec:\n  metadata: [ { paths: [a] } ]\n", ErrorIds.PolicyMissingKey, 5, 15, "has no 'tags'" },
        { "spec:\n  metadata: [ { paths: [a], tags: { 'bad*key': x } } ]\n", ErrorIds.PolicyBadValue, 5, 37, "not allowed by S3" },
        { "spec:\n  metadata: [ { paths: [a], tags: [x] } ]\n", ErrorIds.PolicyWrongType, 5, 35, "must be a map" },
        // S3 user metadata travels in HTTP headers: a literal non-ASCII letter would fail every upload of the file.
        { "spec:\n  metadata: [ { paths: [a], tags: { owner: José } } ]\n", ErrorIds.PolicyBadValue, 5, 44, "ASCII" },
        { "spec:\n  metadata: [ { paths: [a], tags: { abteilung\u00e9: x } } ]\n", ErrorIds.PolicyBadValue, 5, 37, "ASCII" },
        { "spec:\n  metadata: [ { paths: [a], tags: { owner: \"${name} of Jose\" } } ]\n", "", 0, 0, "" },
        { "spec:\n  processExcludes: [ { recall: deny } ]\n", ErrorIds.PolicyMissingKey, 5, 22, "has no 'process'" },
        { "spec:\n  processExcludes: [ { process: x.exe } ]\n", ErrorIds.PolicyMissingKey, 5, 22, "changes nothing" },
        { "spec:\n  processExcludes: [ { process: bin/x, recall: deny } ]\n", ErrorIds.PolicyBadGlob, 5, 33, "has no '/'" },
        { "spec:\n  processExcludes: [ { process: x, fileSync: never } ]\n", ErrorIds.PolicyBadValue, 5, 46, "not one of sync, skip" },
        { "spec:\n  throttle: { upload: 0MB/s }\n", ErrorIds.PolicyBadSize, 5, 23, "stop all transfers" },
        { "spec:\n  throttle: { schedule: [ { days: [Mon], from: \"08:00\", to: \"18:00\" } ] }\n", ErrorIds.PolicyMissingKey, 5, 27, "neither 'upload' nor 'download'" },
        { "spec:\n  throttle: { schedule: [ { days: [Mon], from: \"8am\", to: \"18:00\", upload: 1MB/s } ] }\n", ErrorIds.PolicyBadValue, 5, 48, "not a time of day" },
        { "spec:\n  throttle: { schedule: [ { days: [Mon], from: \"08:00\", to: \"24:01\", upload: 1MB/s } ] }\n", ErrorIds.PolicyBadValue, 5, 61, "not a time of day" },
        { "spec:\n  throttle: { schedule: [ { days: [Mon, mon], from: \"08:00\", to: \"18:00\", upload: 1MB/s } ] }\n", ErrorIds.PolicyBadValue, 5, 41, "listed twice" },
        { "spec:\n  throttle: { schedule: [ { days: [], from: \"08:00\", to: \"18:00\", upload: 1MB/s } ] }\n", ErrorIds.PolicyBadValue, 5, 35, "is empty" },
        { "spec:\n  throttle: { schedule: [ { days: [Mon], from: \"08:00\", upload: 1MB/s } ] }\n", ErrorIds.PolicyMissingKey, 5, 27, "has no 'to'" },
        { "spec:\n  transfer: { restoreThreads: many }\n", ErrorIds.PolicyWrongType, 5, 31, "not a whole number" },
        { "spec:\n  transfer: { restoreThreads: 1000 }\n", ErrorIds.PolicyBadValue, 5, 31, "between 1 and 256" },
        { "spec:\n  transfer: { multipart: { partSize: 1MiB } }\n", ErrorIds.PolicyBadValue, 5, 38, "from 5 MiB to 5 GiB" },
        { "spec:\n  transfer: { multipart: { threshold: 1MiB } }\n", ErrorIds.PolicyBadValue, 5, 39, "below 5 MiB" },
        { "spec:\n  transfer: { multipart: { uploadThreads: 65 } }\n", ErrorIds.PolicyBadValue, 5, 43, "between 1 and 64" },
        { "spec:\n  recallJobs: [ { paths: [a], schedule: \"* * * * *\" } ]\n", ErrorIds.PolicyMissingKey, 5, 17, "has no 'name'" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a] } ]\n", ErrorIds.PolicyMissingKey, 5, 17, "has no 'schedule'" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a], schedule: \"0 6 * *\" } ]\n", ErrorIds.PolicyBadValue, 5, 50, "has 4 field(s)" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a], schedule: \"0 25 * * *\" } ]\n", ErrorIds.PolicyBadValue, 5, 50, "'25' is not a valid hour" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a], schedule: \"@sometimes\" } ]\n", ErrorIds.PolicyBadValue, 5, 50, "not a known macro" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a], schedule: \"@daily\", timeZone: Mars/Olympus } ]\n", ErrorIds.PolicyBadValue, 5, 70, "not a time zone" },
        { "spec:\n  recallJobs: [ { name: j, paths: [a], schedule: \"0 6 * * 1\" }, { name: J, paths: [b], schedule: \"0 7 * * *\" } ]\n", ErrorIds.PolicyBadValue, 5, 73, "already defined" },
    };

    [Theory]
    [MemberData(nameof(ValueProblems))]
    public void Values_are_checked_where_they_are_written(string spec, string id, int line, int column, string words)
    {
        var problems = PolicyLoader.ValidateText(Header + spec, "p.yaml");
        if (id.Length == 0)
        {
            Assert.Empty(problems);
            return;
        }
        Assert.NotEmpty(problems);
        var problem = problems[0];
        Assert.Equal((id, line, column), (problem.ErrorId, problem.Line, problem.Column));
        Assert.Contains(words, problem.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrWhiteSpace(problem.Remedy));
    }

    [Fact]
    public void The_message_names_the_key_path_of_the_bad_value()
    {
        var problem = FirstProblem("spec:\n  stubbing:\n    rules:\n      - paths: [a]\n        accessWait: soon\n");
        Assert.Equal("p.yaml:8:21: spec.stubbing.rules[0].accessWait: 'soon' is not a duration; write a whole number followed by s, m, h or d (e.g. 30s, 5m, 1h30m, 30d)", problem.Formatted);
    }

    [Fact]
    public void The_end_to_end_scenario_policy_reports_line_five_for_a_misspelt_access_wait()
    {
        // The shape tests/GeoDrive.EndToEnd.Tests/DriveScenario.cs writes; its BadInputTests rely on these places.
        const string yaml = """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: scenario }
            spec:
              stubbing: { enabled: true, acessWait: 30d }
              upload: { settle: 30x }
            """;
        var problems = PolicyLoader.ValidateText(yaml, "policy.yaml");
        Assert.Equal([(ErrorIds.PolicyUnknownKey, 5), (ErrorIds.PolicyBadDuration, 6)], problems.Select(p => (p.ErrorId, p.Line)));
    }
}
