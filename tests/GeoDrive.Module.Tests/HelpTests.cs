using System.Management.Automation;
using System.Management.Automation.Language;
using System.Xml.Linq;

namespace GeoDrive.Module.Tests;

/// <summary>Every exported cmdlet has help with a synopsis, its parameters and examples that parse.</summary>
[Collection(ModuleCollection.Name)]
public sealed class HelpTests(ModuleSession session)
{
    private static readonly XNamespace Command = "http://schemas.microsoft.com/maml/dev/command/2004/10";
    private static readonly XNamespace Maml = "http://schemas.microsoft.com/maml/2004/10";
    private static readonly XNamespace Dev = "http://schemas.microsoft.com/maml/dev/2004/10";

    private static readonly string MamlPath = RepoRoot.Combine("module", "en-US", "GeoDrive.Commands.dll-Help.xml");

    private static List<string> Exported => ManifestList("CmdletsToExport");

    public static TheoryData<string> ExportedCmdlets() => [.. Exported];

    public static TheoryData<string, int> Examples()
    {
        var data = new TheoryData<string, int>();
        foreach (var command in XDocument.Load(MamlPath).Descendants(Command + "command"))
        {
            var name = command.Element(Command + "details")!.Element(Command + "name")!.Value;
            var count = command.Descendants(Command + "example").Count();
            for (var i = 0; i < count; i++)
            {
                data.Add(name, i);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(ExportedCmdlets))]
    public void Get_Help_returns_a_synopsis_written_for_the_cmdlet(string cmdlet)
    {
        var help = session.Invoke("Get-Help -Name $name", new Dictionary<string, object?> { ["name"] = cmdlet }).Single();
        var synopsis = help.Properties["Synopsis"].Value?.ToString() ?? "";

        Assert.False(string.IsNullOrWhiteSpace(synopsis));
        // Without a help file PowerShell makes the syntax line the synopsis.
        Assert.DoesNotContain("CommonParameters", synopsis, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(ExportedCmdlets))]
    public void The_help_documents_every_parameter_and_has_an_example(string cmdlet)
    {
        var entry = XDocument.Load(MamlPath).Descendants(Command + "command")
            .SingleOrDefault(c => c.Element(Command + "details")!.Element(Command + "name")!.Value == cmdlet);
        Assert.NotNull(entry);
        var documented = entry.Descendants(Command + "parameter").Select(p => p.Element(Maml + "name")!.Value).Order().ToList();
        var actual = session.Command(cmdlet).Parameters.Keys
            .Where(k => !Cmdlet.CommonParameters.Contains(k) && !Cmdlet.OptionalCommonParameters.Contains(k)).Order().ToList();

        Assert.Equal(actual, documented);
        Assert.NotEmpty(entry.Descendants(Command + "example"));
    }

    [Theory]
    [MemberData(nameof(Examples))]
    public void Each_example_in_the_help_parses(string cmdlet, int index)
    {
        var example = XDocument.Load(MamlPath).Descendants(Command + "command")
            .Single(c => c.Element(Command + "details")!.Element(Command + "name")!.Value == cmdlet)
            .Descendants(Command + "example").ElementAt(index);
        var code = example.Element(Dev + "code")!.Value;

        Parser.ParseInput(code, out _, out var errors);

        Assert.True(errors.Length == 0, $"{cmdlet} example {index + 1}: {string.Join("; ", errors.Select(e => e.Message))}");
        Assert.Contains(cmdlet, code, StringComparison.OrdinalIgnoreCase);
    }

    public static TheoryData<string, int> PolicyExamples()
    {
        var data = new TheoryData<string, int>();
        foreach (var row in Examples())
        {
            if (row[0] is "Test-CloudPolicy" or "Get-CloudPolicy" or "Get-CloudPolicyDecision")
            {
                data.Add((string)row[0], (int)row[1]);
            }
        }
        return data;
    }

    /// <summary>
    /// The policy cmdlets' examples are run as written, from the repository root: Test-CloudPolicy's
    /// succeed outright; the others get as far as the (stopped) service, so their parameters bind.
    /// </summary>
    [Theory]
    [MemberData(nameof(PolicyExamples))]
    public void Each_example_of_the_policy_cmdlets_runs(string cmdlet, int index)
    {
        var code = XDocument.Load(MamlPath).Descendants(Command + "command")
            .Single(c => c.Element(Command + "details")!.Element(Command + "name")!.Value == cmdlet)
            .Descendants(Command + "example").ElementAt(index).Element(Dev + "code")!.Value;
        session.Invoke("$ExecutionContext.SessionState.Path.SetLocation($root) | Out-Null", new Dictionary<string, object?> { ["root"] = RepoRoot.Path });

        var errors = new List<ErrorRecord>();
        try
        {
            var output = session.Invoke(code);
            errors.AddRange(session.LastErrors);
            if (cmdlet == "Test-CloudPolicy" && index == 0)
            {
                Assert.True((bool)output.Single().BaseObject);
            }
        }
        catch (RuntimeException ex)
        {
            errors.Add(ex.ErrorRecord);
        }

        if (cmdlet == "Test-CloudPolicy")
        {
            Assert.True(errors.Count == 0, string.Join("; ", errors.Select(e => e.FullyQualifiedErrorId + ": " + e.Exception.Message)));
        }
        else
        {
            Assert.Equal($"ServiceNotRunning,GeoDrive.Commands.{cmdlet.Replace("-", "", StringComparison.Ordinal)}Command", Assert.Single(errors).FullyQualifiedErrorId);
        }
    }

    [Fact]
    public void The_manifest_exports_exactly_the_cmdlets_the_assembly_defines()
    {
        var defined = session.Invoke("(Get-Module GeoDrive).ExportedCmdlets.Keys").Select(o => o.ToString()).Order().ToList();
        var exported = Exported.Order().ToList();
        var implemented = session.Command("Get-CloudDrive").ImplementingType.Assembly.GetTypes()
            .Select(t => t.GetCustomAttributes(typeof(CmdletAttribute), false).Cast<CmdletAttribute>().SingleOrDefault())
            .OfType<CmdletAttribute>()
            .Select(a => $"{a.VerbName}-{a.NounName}").Order().ToList();

        Assert.Equal(exported, defined);
        Assert.Equal(exported, implemented);
    }

    [Fact]
    public void Every_cmdlet_declares_its_output_type() =>
        Assert.All(Exported, name => Assert.NotEmpty(session.Command(name).OutputType));

    /// <summary>The strings listed under one key of ./GeoDrive.psd1 (read as PowerShell data, not text).</summary>
    internal static List<string> ManifestList(string key)
    {
        var ast = Parser.ParseFile(ModuleSession.ManifestPath, out _, out var errors);
        Assert.Empty(errors);
        var manifest = (HashtableAst)ast.Find(a => a is HashtableAst, searchNestedScriptBlocks: false)!;
        var value = manifest.KeyValuePairs.Single(p => string.Equals(((StringConstantExpressionAst)p.Item1).Value, key, StringComparison.OrdinalIgnoreCase)).Item2;
        return [.. value.FindAll(a => a is StringConstantExpressionAst, searchNestedScriptBlocks: false).Cast<StringConstantExpressionAst>().Select(s => s.Value)];
    }
}
