using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using GeoDrive.Core.Errors;
using GeoDrive.Policies.Globs;
using GeoDrive.Policies.Model;
using YamlDotNet.RepresentationModel;

namespace GeoDrive.Policies.Loading;

// Typed access to YAML nodes. Every accessor reports what is wrong at the node's own line and column
// and returns null, so that reading goes on and the administrator sees every problem at once.
internal sealed partial class PolicyReader
{
    private delegate bool Parser<T>(string text, out T value, [NotNullWhen(false)] out string? error);

    private const string UnitsRemedy = "docs/policies.md, section Units, shows every form.";

    private SourceLocation At(YamlNode node) =>
        new(_file, checked((int)node.Start.Line), checked((int)node.Start.Column));

    private void Report(string errorId, YamlNode node, string message, string remedy) =>
        Report(errorId, checked((int)node.Start.Line), checked((int)node.Start.Column), message, remedy);

    private void Report(string errorId, int line, int column, string message, string remedy) =>
        _problems.Add(new PolicyProblem(errorId, _file, line, column, message, remedy));

    private static string Join(string path, string key) => path.Length == 0 ? key : $"{path}.{key}";

    private static string Describe(YamlNode node) => node switch
    {
        YamlMappingNode => "a map",
        YamlSequenceNode => "a list",
        _ => "a single value",
    };

    /// <summary>A map with a fixed set of keys; unknown keys are reported (with a suggestion) when it is made.</summary>
    private sealed class Section
    {
        private readonly Dictionary<string, (YamlScalarNode Key, YamlNode Value)> _entries = new(StringComparer.Ordinal);

        public Section(PolicyReader reader, YamlMappingNode node, YamlNode anchor, string path, IReadOnlyList<string> keys)
        {
            Node = node;
            Anchor = anchor;
            Path = path;
            foreach (var (keyNode, value) in node.Children)
            {
                if (keyNode is not YamlScalarNode { Value: { } key } scalarKey)
                {
                    reader.Report(ErrorIds.PolicyWrongType, keyNode, $"a key at {PathText} is {Describe(keyNode)}; keys must be plain names",
                        "Write the key as a plain name such as 'accessWait'.");
                    continue;
                }
                if (!keys.Contains(key, StringComparer.Ordinal))
                {
                    var suggestion = KeySuggestion.Closest(key, keys);
                    var hint = suggestion is not null
                        ? $"; did you mean '{suggestion}'?"
                        : $"; the keys allowed here are {string.Join(", ", keys)}";
                    reader.Report(ErrorIds.PolicyUnknownKey, keyNode, $"unknown key '{key}' at {PathText}{hint}",
                        "Correct or remove the key; docs/policies.md lists every key.");
                    continue;
                }
                _entries[key] = (scalarKey, value);
            }
        }

        public YamlMappingNode Node { get; }

        /// <summary>Where the section starts in the file: the place to report a key it lacks.</summary>
        public YamlNode Anchor { get; }

        public string Path { get; }

        private string PathText => Path.Length == 0 ? "the top level" : Path;

        public YamlNode? this[string key] => _entries.TryGetValue(key, out var entry) ? entry.Value : null;

        public bool Has(string key) => _entries.ContainsKey(key);

        public string PathOf(string key) => Join(Path, key);
    }

    private Section? ReadSection(YamlNode node, string path, params string[] keys)
    {
        if (node is YamlMappingNode map)
        {
            return new Section(this, map, map, path, keys);
        }
        if (IsNull(node))
        {
            // "stubbing:" with nothing after it: an empty section, which is harmless.
            return new Section(this, new YamlMappingNode(), node, path, keys);
        }
        Report(ErrorIds.PolicyWrongType, node, $"{path} must be a map of settings ({string.Join(", ", keys)}) but is {Describe(node)}",
            $"Write {path} as 'key: value' lines or as {{ key: value, … }}.");
        return null;
    }

    /// <summary>A required key: reports it missing at the start of the map that should hold it.</summary>
    private YamlNode? Require(Section section, string key, string example)
    {
        var node = section[key];
        if (node is null)
        {
            var where = section.Path.Length == 0 ? "the file" : section.Path;
            Report(ErrorIds.PolicyMissingKey, section.Anchor, $"{where} has no '{key}', which is required", $"Add it, e.g. {example}.");
        }
        return node;
    }

    private YamlSequenceNode? ReadList(YamlNode node, string path, string example)
    {
        if (node is YamlSequenceNode list)
        {
            return list;
        }
        if (IsNull(node))
        {
            return new YamlSequenceNode();
        }
        Report(ErrorIds.PolicyWrongType, node, $"{path} must be a list but is {Describe(node)}",
            $"Write it as a list, e.g. {example}.");
        return null;
    }

    private YamlScalarNode? ReadScalar(YamlNode node, string path, string expected)
    {
        if (node is YamlScalarNode scalar && !IsNull(node))
        {
            return scalar;
        }
        var found = IsNull(node) ? "nothing" : Describe(node);
        Report(ErrorIds.PolicyWrongType, node, $"{path} must be {expected} but is {found}",
            $"Write a single value there, e.g. {ExampleFor(expected)}.");
        return null;
    }

    private static bool IsNull(YamlNode node) =>
        node is YamlScalarNode { Style: YamlDotNet.Core.ScalarStyle.Plain, Value: null or "" or "~" or "null" or "Null" or "NULL" };

    private static string ExampleFor(string expected) => expected switch
    {
        "a duration" => "30s",
        "a size" => "64KiB",
        "true or false" => "true",
        _ => "a plain word or a quoted string",
    };

    private PolicyValue<T>? Value<T>(Section section, string key, string errorId, string expected, Parser<T> parse, string remedy)
    {
        var node = section[key];
        return node is null ? null : Value(node, section.PathOf(key), errorId, expected, parse, remedy);
    }

    private PolicyValue<T>? Value<T>(YamlNode node, string path, string errorId, string expected, Parser<T> parse, string remedy)
    {
        var scalar = ReadScalar(node, path, expected);
        if (scalar is null)
        {
            return null;
        }
        if (!parse(scalar.Value!, out var value, out var error))
        {
            Report(errorId, scalar, $"{path}: {error}", remedy);
            return null;
        }
        return new PolicyValue<T>(value, At(scalar));
    }

    private PolicyValue<TimeSpan>? Duration(Section section, string key) =>
        Value<TimeSpan>(section, key, ErrorIds.PolicyBadDuration, "a duration", PolicyUnits.TryParseDuration,
            "Write a duration such as 30s, 5m, 1h30m or 30d; " + UnitsRemedy);

    private PolicyValue<long>? Size(Section section, string key) =>
        Value<long>(section, key, ErrorIds.PolicyBadSize, "a size", PolicyUnits.TryParseSize,
            "Write a size such as 64KiB, 10MB or 2GiB; " + UnitsRemedy);

    private PolicyValue<long>? Rate(Section section, string key) =>
        Value<long>(section, key, ErrorIds.PolicyBadSize, "a rate", PolicyUnits.TryParseRate,
            "Write a rate such as 100MB/s or 20MiB/s, or 'unlimited'; " + UnitsRemedy);

    private PolicyValue<bool>? Bool(Section section, string key) =>
        Value<bool>(section, key, ErrorIds.PolicyWrongType, "true or false", ParseBool, "Write true or false.");

    private PolicyValue<string>? Text(Section section, string key) =>
        Value<string>(section, key, ErrorIds.PolicyWrongType, "a string", ParseText, "Write a single line of text.");

    private PolicyValue<int>? Count(Section section, string key, int min, int max)
    {
        var value = Value<int>(section, key, ErrorIds.PolicyWrongType, "a whole number", ParseInt, "Write a whole number such as 8.");
        if (value is not null && (value.Value < min || value.Value > max))
        {
            Report(ErrorIds.PolicyBadValue, section[key]!, $"{section.PathOf(key)} is {value.Value} but must be between {min} and {max}",
                $"Choose a number from {min} to {max}.");
            return null;
        }
        return value;
    }

    private PolicyValue<T>? Choice<T>(Section section, string key, params (string Name, T Value)[] choices)
    {
        var node = section[key];
        if (node is null)
        {
            return null;
        }
        var names = choices.Select(c => c.Name).ToArray();
        return Value(node, section.PathOf(key), ErrorIds.PolicyBadValue, "one of " + string.Join(", ", names),
            (string text, out T value, [NotNullWhen(false)] out string? error) =>
            {
                var index = Array.FindIndex(names, n => n.Equals(text.Trim(), StringComparison.OrdinalIgnoreCase));
                if (index >= 0)
                {
                    value = choices[index].Value;
                    error = null;
                    return true;
                }
                value = default!;
                var suggestion = KeySuggestion.Closest(text, names);
                error = $"'{text}' is not one of {string.Join(", ", names)}" + (suggestion is null ? "" : $"; did you mean '{suggestion}'?");
                return false;
            },
            $"Write one of: {string.Join(", ", names)}.");
    }

    private List<PathPattern> Patterns(YamlNode node, string path)
    {
        var patterns = new List<PathPattern>();
        var list = ReadList(node, path, "[ \"Active/**\", \"**/*.iso\" ]");
        if (list is null)
        {
            return patterns;
        }
        for (var i = 0; i < list.Children.Count; i++)
        {
            var itemPath = $"{path}[{i}]";
            var scalar = ReadScalar(list.Children[i], itemPath, "a path pattern");
            if (scalar is null)
            {
                continue;
            }
            if (!Glob.TryParse(scalar.Value!, out var glob, out var error))
            {
                Report(ErrorIds.PolicyBadGlob, scalar, $"{itemPath}: the pattern '{scalar.Value}' is not valid: {error}",
                    "Fix the pattern; docs/policies.md, section Path patterns, shows every form.");
                continue;
            }
            patterns.Add(new PathPattern(glob, At(scalar)));
        }
        return patterns;
    }

    /// <summary>The patterns of a rule's required 'paths' key, with at least one entry.</summary>
    private List<PathPattern> RequiredPatterns(Section rule)
    {
        var node = Require(rule, "paths", "paths: [\"Active/**\"]");
        if (node is null)
        {
            return [];
        }
        var patterns = Patterns(node, rule.PathOf("paths"));
        if (node is YamlSequenceNode { Children.Count: 0 } || IsNull(node))
        {
            Report(ErrorIds.PolicyBadValue, node, $"{rule.PathOf("paths")} is empty, so the rule would apply to nothing",
                "Give at least one path pattern, or remove the rule.");
        }
        return patterns;
    }

    private static bool ParseBool(string text, out bool value, [NotNullWhen(false)] out string? error)
    {
        error = null;
        if (bool.TryParse(text.Trim(), out value))
        {
            return true;
        }
        error = $"'{text}' is not true or false"
            + (text.Trim().ToLowerInvariant() is "yes" or "no" or "on" or "off" or "y" or "n"
                ? " (YAML 1.1 spellings such as yes/no/on/off are not accepted, because they surprise)"
                : "");
        return false;
    }

    private static bool ParseInt(string text, out int value, [NotNullWhen(false)] out string? error)
    {
        error = null;
        if (int.TryParse(text.Trim(), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value))
        {
            return true;
        }
        error = $"'{text}' is not a whole number";
        return false;
    }

    private static bool ParseText(string text, out string value, [NotNullWhen(false)] out string? error)
    {
        value = text;
        error = null;
        return true;
    }
}
