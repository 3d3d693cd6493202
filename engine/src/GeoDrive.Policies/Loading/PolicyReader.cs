using System.Text.RegularExpressions;
using GeoDrive.Core.Errors;
using GeoDrive.Policies.Model;
using YamlDotNet.Core;
using YamlDotNet.Core.Events;
using YamlDotNet.RepresentationModel;

namespace GeoDrive.Policies.Loading;

/// <summary>
/// Reads one policy file into a <see cref="PolicyDocument"/>, collecting every problem on the way. The
/// representation model (not the deserializer) is used because every node keeps its line and column.
/// </summary>
internal sealed partial class PolicyReader
{
    public const string ApiVersion = "geodrive/v1";
    public const string Kind = "CloudDrivePolicy";

    private const string SyntaxRemedy =
        "Fix the YAML there: indent with spaces, and quote values that start with * & ! [ { or contain ': '.";

    private readonly string _file;
    private readonly List<PolicyProblem> _problems = [];

    private PolicyReader(string file) => _file = file;

    /// <summary>The document when the file is valid, and every problem found (sorted by position) when it is not.</summary>
    public static (PolicyDocument? Document, IReadOnlyList<PolicyProblem> Problems) Read(string text, string file)
    {
        var reader = new PolicyReader(file);
        var document = reader.ReadText(text);
        var problems = reader._problems
            .Select((p, i) => (p, i))
            .OrderBy(x => x.p.Line).ThenBy(x => x.p.Column).ThenBy(x => x.i)
            .Select(x => x.p)
            .ToList();
        // A bad file is refused whole: a document is only handed out when nothing at all was wrong.
        return (problems.Count == 0 ? document : null, problems);
    }

    private PolicyDocument? ReadText(string text)
    {
        var stream = new YamlStream();
        try
        {
            stream.Load(new StringReader(text));
        }
        catch (AnchorNotFoundException)
        {
            // Unquoted globs such as *.tmp read as YAML aliases; YamlDotNet gives no position for them.
            ReportUnquotedStar(text);
            return null;
        }
        catch (YamlException ex)
        {
            ReportSyntax(text, ex);
            return null;
        }
        catch (InvalidOperationException)
        {
            // YamlDotNet 18 fails this way, without a position, when the file ends inside a [ ] or { }.
            ReportUnclosed(text);
            return null;
        }
        if (stream.Documents.Count == 0)
        {
            Report(ErrorIds.PolicySyntax, 1, 1, "the file is empty", $"Start it with 'apiVersion: {ApiVersion}' and 'kind: {Kind}'.");
            return null;
        }
        if (stream.Documents.Count > 1)
        {
            Report(ErrorIds.PolicySyntax, stream.Documents[1].RootNode, "the file holds more than one YAML document ('---'); a policy file holds one policy",
                "Put each policy in its own file and list the files in order.");
            return null;
        }
        return ReadDocument(stream.Documents[0].RootNode);
    }

    private void ReportSyntax(string text, YamlException ex)
    {
        var line = checked((int)ex.Start.Line);
        var column = checked((int)ex.Start.Column);
        // YamlDotNet reports a tab at the start of the enclosing map, not at the tab; a tab in the
        // indentation is almost always the cause when one is present, so point at the first.
        var lines = text.Split('\n');
        for (var i = 0; i < lines.Length; i++)
        {
            var indent = lines[i].Length - lines[i].TrimStart(' ', '\t').Length;
            var tab = lines[i].IndexOf('\t', StringComparison.Ordinal);
            if (tab >= 0 && tab < indent)
            {
                Report(ErrorIds.PolicySyntax, i + 1, tab + 1, "a tab is used for indentation; YAML allows only spaces there",
                    "Replace the tab with spaces (set your editor to insert spaces for .yaml files).");
                return;
            }
        }
        var message = LocationPrefix().Replace(ex.Message, "");
        var duplicate = DuplicateKey().Match(message);
        if (duplicate.Success)
        {
            Report(ErrorIds.PolicySyntax, line, column, $"the key '{duplicate.Groups["key"].Value}' appears twice in the same map",
                "Keep one of them; a key may be given only once per map.");
            return;
        }
        Report(ErrorIds.PolicySyntax, Math.Max(line, 1), Math.Max(column, 1), $"the file is not valid YAML: {message.TrimEnd('.')}", SyntaxRemedy);
    }

    private void ReportUnquotedStar(string text)
    {
        var defined = new HashSet<string>(StringComparer.Ordinal);
        var parser = new Parser(new StringReader(text));
        while (parser.MoveNext())
        {
            if (parser.Current is NodeEvent { Anchor.IsEmpty: false } withAnchor)
            {
                defined.Add(withAnchor.Anchor.Value);
            }
            if (parser.Current is AnchorAlias alias && !defined.Contains(alias.Value.Value))
            {
                Report(ErrorIds.PolicySyntax, checked((int)alias.Start.Line), checked((int)alias.Start.Column),
                    $"the value '*{alias.Value.Value}' starts with '*', which YAML reads as a reference to an anchor",
                    $"Put the value in quotes: \"*{alias.Value.Value}\".");
                return;
            }
        }
        Report(ErrorIds.PolicySyntax, 1, 1, "the file refers to a YAML anchor that it does not define", SyntaxRemedy);
    }

    private void ReportUnclosed(string text)
    {
        var open = new Stack<ParsingEvent>();
        var last = new Mark();
        try
        {
            var parser = new Parser(new StringReader(text));
            while (parser.MoveNext())
            {
                var e = parser.Current!;
                last = e.End;
                if (e is SequenceStart or MappingStart)
                {
                    open.Push(e);
                }
                else if (e is SequenceEnd or MappingEnd && open.Count > 0)
                {
                    open.Pop();
                }
            }
        }
        catch (Exception ex) when (ex is YamlException or InvalidOperationException)
        {
            // Expected: the same failure again; what was still open when it happened is the answer.
        }
        var flow = open.FirstOrDefault(e => e is SequenceStart { Style: SequenceStyle.Flow } or MappingStart { Style: MappingStyle.Flow });
        if (flow is not null)
        {
            var bracket = flow is SequenceStart ? "'[' … ']'" : "'{' … '}'";
            Report(ErrorIds.PolicySyntax, checked((int)flow.Start.Line), checked((int)flow.Start.Column),
                $"the {bracket} that starts here is never closed", "Close it on the same line, or check for a missing ']' or '}'.");
            return;
        }
        Report(ErrorIds.PolicySyntax, Math.Max(1, checked((int)last.Line)), Math.Max(1, checked((int)last.Column)),
            "the file is not valid YAML from about here on", SyntaxRemedy);
    }

    private PolicyDocument? ReadDocument(YamlNode root)
    {
        if (root is not YamlMappingNode)
        {
            Report(ErrorIds.PolicyWrongType, root, $"the file must be a map starting with 'apiVersion: {ApiVersion}' but is {Describe(root)}",
                "See policies/default.yaml for the shape of a policy file.");
            return null;
        }
        var top = ReadSection(root, "", "apiVersion", "kind", "metadata", "spec")!;

        if (Require(top, "apiVersion", $"apiVersion: {ApiVersion}") is { } apiNode
            && ReadScalar(apiNode, "apiVersion", "a string") is { } api && api.Value != ApiVersion)
        {
            Report(ErrorIds.PolicyBadValue, api, $"unknown apiVersion '{api.Value}'; this GeoDrive reads '{ApiVersion}'",
                $"Write 'apiVersion: {ApiVersion}', or update GeoDrive if the file was written for a newer one.");
        }
        if (Require(top, "kind", $"kind: {Kind}") is { } kindNode
            && ReadScalar(kindNode, "kind", "a string") is { } kind && kind.Value != Kind)
        {
            Report(ErrorIds.PolicyBadValue, kind, $"unknown kind '{kind.Value}'; a policy file has kind '{Kind}'",
                $"Write 'kind: {Kind}'.");
        }

        PolicyValue<string>? name = null;
        PolicyValue<string>? description = null;
        if (Require(top, "metadata", "metadata: { name: my-share }") is { } metadataNode
            && ReadSection(metadataNode, "metadata", "name", "description") is { } metadata)
        {
            if (Require(metadata, "name", "name: finance-archive") is not null)
            {
                name = Text(metadata, "name");
                if (name is not null && !NamePattern().IsMatch(name.Value))
                {
                    Report(ErrorIds.PolicyBadValue, metadata["name"]!, $"metadata.name '{name.Value}' may hold only letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)",
                        "Choose a short name such as finance-archive; it is shown when decisions are explained.");
                }
            }
            description = Text(metadata, "description");
        }

        PolicyDocument? document = null;
        if (Require(top, "spec", "spec: { upload: { settle: 30s } }") is { } specNode)
        {
            document = ReadSpec(specNode, name) is { } read ? read with { Description = description } : null;
        }
        return document;
    }

    [GeneratedRegex(@"^\(Line: \d+, Col: \d+, Idx: \d+\) - \(Line: \d+, Col: \d+, Idx: \d+\): ", RegexOptions.CultureInvariant)]
    private static partial Regex LocationPrefix();

    [GeneratedRegex(@"Duplicate key\s*'?(?<key>[^']*?)'?\s*\.?$", RegexOptions.CultureInvariant | RegexOptions.IgnoreCase)]
    private static partial Regex DuplicateKey();

    [GeneratedRegex(@"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", RegexOptions.CultureInvariant)]
    private static partial Regex NamePattern();
}
