using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class TestCloudPolicyTests(ModuleSession session) : CmdletTests(session)
{
    private static readonly string Good = RepoRoot.Combine("policies", "default.yaml");
    private static readonly string Typo = RepoRoot.Combine("tests", "fixtures", "policies", "bad", "unknown-key-typo.yaml");

    private bool Test(string script, IDictionary<string, object?>? variables = null) =>
        (bool)Session.Invoke(script, variables).Single().BaseObject;

    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Test-CloudPolicy");
        Contract.Parameters(cmdlet, "Path", "LiteralPath");
        Contract.Mandatory(cmdlet, "Path", true, "Path");
        Assert.Equal(0, Contract.Parameter(cmdlet, "Path", "Path").Position);
        Contract.ByPropertyName(cmdlet, "Path", "Path");
        Assert.True(Contract.Parameter(cmdlet, "Path", "Path").ValueFromPipeline);
        Contract.Wildcards(cmdlet, "Path");
        Contract.Type(cmdlet, "Path", typeof(string[]));
        Contract.Mandatory(cmdlet, "LiteralPath", true, "LiteralPath");
        Contract.ByPropertyName(cmdlet, "LiteralPath", "LiteralPath");
        Contract.Alias(cmdlet, "LiteralPath", "PSPath");
        Assert.Equal("Path", cmdlet.DefaultParameterSet);
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "System.Boolean");
    }

    [Fact]
    public void A_valid_file_gives_true_and_no_error()
    {
        Assert.True(Test("Test-CloudPolicy -Path $p", new Dictionary<string, object?> { ["p"] = Good }));
        Assert.Empty(Session.LastErrors);
    }

    [Fact]
    public void Wildcards_check_every_matching_file_and_need_no_service()
    {
        Assert.True(Test("Test-CloudPolicy -Path $p -Verbose", new Dictionary<string, object?> { ["p"] = RepoRoot.Combine("policies", "examples", "*.yaml") }));
        Assert.Empty(Session.LastErrors);
        Assert.Equal(2, Session.LastVerbose.Count);
    }

    [Fact]
    public void A_misspelt_key_gives_false_and_an_error_with_the_loader_id_and_file_line_column()
    {
        Assert.False(Test("Test-CloudPolicy -Path $p", new Dictionary<string, object?> { ["p"] = Typo }));

        var error = Assert.Single(Session.LastErrors);
        Assert.Equal("PolicyUnknownKey,GeoDrive.Commands.TestCloudPolicyCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.InvalidData, error.CategoryInfo.Category);
        Assert.StartsWith($"{Typo}:6:5: unknown key 'acessWait'", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("did you mean 'accessWait'?", error.Exception.Message, StringComparison.Ordinal);
        Assert.Equal(Typo, error.TargetObject);
    }

    [Fact]
    public void Every_problem_of_every_file_is_written_and_one_bad_file_makes_the_run_false()
    {
        var bad = Path.Combine(Session.Scratch, "two-problems.yaml");
        File.WriteAllText(bad, "apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: two }\nspec:\n  upload: { settle: 30, mode: later }\n");

        Assert.False(Test("Test-CloudPolicy -LiteralPath $good, $bad", new Dictionary<string, object?> { ["good"] = Good, ["bad"] = bad }));

        Assert.Equal(
            ["PolicyBadDuration,GeoDrive.Commands.TestCloudPolicyCommand", "PolicyBadValue,GeoDrive.Commands.TestCloudPolicyCommand"],
            Session.LastErrors.Select(e => e.FullyQualifiedErrorId).Order(StringComparer.Ordinal));
        Assert.All(Session.LastErrors, e => Assert.StartsWith(bad + ":5:", e.Exception.Message, StringComparison.Ordinal));
    }

    [Fact]
    public void A_missing_file_is_PolicyFileNotFound_and_false() =>
        AssertRefused("Test-CloudPolicy -Path ./no-such-policy.yaml", "PolicyFileNotFound", ErrorCategory.ObjectNotFound);

    [Fact]
    public void A_pattern_that_matches_nothing_is_PolicyFileNotFound_and_false() =>
        AssertRefused("Test-CloudPolicy -Path ./no-such-folder-*/*.yaml", "PolicyFileNotFound", ErrorCategory.ObjectNotFound);

    [Fact]
    public void A_literal_path_is_not_expanded()
    {
        var bracket = Path.Combine(Session.Scratch, "site[1].yaml");
        File.Copy(Good, bracket, overwrite: true);

        Assert.True(Test("Test-CloudPolicy -LiteralPath $p", new Dictionary<string, object?> { ["p"] = bracket }));
    }

    [Fact]
    public void Files_bind_from_the_pipeline_by_property_name()
    {
        var files = new[] { new FileInfo(Good), new FileInfo(Typo) };

        Assert.False(Test("$files | Test-CloudPolicy", new Dictionary<string, object?> { ["files"] = files }));
        Assert.Equal("PolicyUnknownKey,GeoDrive.Commands.TestCloudPolicyCommand", Assert.Single(Session.LastErrors).FullyQualifiedErrorId);
    }

    [Fact]
    public void Paths_bind_from_the_pipeline_as_strings()
    {
        Assert.True(Test("$p | Test-CloudPolicy", new Dictionary<string, object?> { ["p"] = new[] { Good } }));
        Assert.Empty(Session.LastErrors);
    }

    private void AssertRefused(string script, string id, ErrorCategory category)
    {
        Assert.False(Test(script));
        var error = Assert.Single(Session.LastErrors);
        Assert.Equal($"{id},GeoDrive.Commands.TestCloudPolicyCommand", error.FullyQualifiedErrorId);
        Assert.Equal(category, error.CategoryInfo.Category);
    }
}
