using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using GeoDrive.Policies.Loading;

namespace GeoDrive.Policies.Tests.Schema;

/// <summary>
/// Every map the loader reads and the keys it accepts there, found by asking the loader itself: a key
/// no section has is put at each place in turn, and the refusal lists the keys allowed there. A key
/// whose value refuses an unknown key of its own (as a map or as a list of maps) is a section too.
/// So a key added to the loader shows up here without anyone listing it.
/// </summary>
internal static partial class LoaderKeys
{
    private const string Probe = "zzzzzzzzzzzzzzzzzzzzzzzz";

    /// <summary>Section path ("" for the top level, "spec.stubbing.rules[]" for the maps in a list) -> its keys.</summary>
    public static IReadOnlyDictionary<string, SortedSet<string>> Sections { get; } = Explore();

    private static Dictionary<string, SortedSet<string>> Explore()
    {
        var sections = new Dictionary<string, SortedSet<string>>(StringComparer.Ordinal);
        Visit([], sections);
        return sections;
    }

    private static bool Visit(List<(string Key, bool List)> at, Dictionary<string, SortedSet<string>> sections)
    {
        var keys = AllowedKeys(at);
        if (keys is null)
        {
            return false;
        }
        sections[PathOf(at)] = keys;
        foreach (var key in keys)
        {
            if (!Visit([.. at, (key, false)], sections))
            {
                Visit([.. at, (key, true)], sections);
            }
        }
        return true;
    }

    private static SortedSet<string>? AllowedKeys(List<(string Key, bool List)> at)
    {
        JsonNode node = new JsonObject { [Probe] = 1 };
        for (var i = at.Count - 1; i >= 0; i--)
        {
            node = new JsonObject { [at[i].Key] = at[i].List ? new JsonArray(node) : node };
        }
        // JSON is YAML (flow style), so the probe needs no YAML writer.
        var problems = PolicyLoader.ValidateText(node.ToJsonString(), "probe.yaml");
        var expectedPath = at.Count == 0 ? "the top level" : PathOf(at).Replace("[]", "[0]", StringComparison.Ordinal);
        foreach (var problem in problems.Where(p => p.ErrorId == "PolicyUnknownKey"))
        {
            var match = Allowed().Match(problem.Message);
            Assert.True(match.Success, "the unknown-key message changed shape: " + problem.Message);
            if (match.Groups["path"].Value == expectedPath)
            {
                return new SortedSet<string>(match.Groups["keys"].Value.Split(", "), StringComparer.Ordinal);
            }
        }
        return null;
    }

    private static string PathOf(List<(string Key, bool List)> at) =>
        string.Join('.', at.Select(s => s.List ? s.Key + "[]" : s.Key));

    [GeneratedRegex($"^unknown key '{Probe}' at (?<path>.+?); the keys allowed here are (?<keys>.+)$")]
    private static partial Regex Allowed();
}
