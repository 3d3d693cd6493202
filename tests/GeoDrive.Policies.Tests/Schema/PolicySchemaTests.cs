using Newtonsoft.Json.Linq;
using NJsonSchema;
using YamlDotNet.RepresentationModel;

namespace GeoDrive.Policies.Tests.Schema;

/// <summary>
/// policies/schema/geodrive-policy.v1.schema.json (what editors check while an administrator types) and
/// the loader (what GeoDrive enforces) know the same keys, and every shipped policy passes both.
/// </summary>
public sealed class PolicySchemaTests
{
    private static readonly string SchemaPath = RepoFiles.Policy("schema", "geodrive-policy.v1.schema.json");

    private static readonly JObject SchemaJson = JObject.Parse(File.ReadAllText(SchemaPath));

    private static readonly JsonSchema Schema = JsonSchema.FromJsonAsync(File.ReadAllText(SchemaPath)).GetAwaiter().GetResult();

    [Fact]
    public void The_schema_closes_exactly_the_maps_the_loader_reads()
    {
        var loader = LoaderKeys.Sections;
        var schema = SchemaSections();

        Assert.Equal(loader.Keys.Order(StringComparer.Ordinal), schema.Keys.Order(StringComparer.Ordinal));
        Assert.Contains("spec.transfer.multipart", loader.Keys);
        Assert.Contains("spec.throttle.schedule[]", loader.Keys);
    }

    [Fact]
    public void Every_key_the_loader_accepts_is_in_the_schema_and_every_schema_key_is_accepted()
    {
        var schema = SchemaSections();
        foreach (var (path, keys) in LoaderKeys.Sections)
        {
            Assert.True(schema.TryGetValue(path, out var described), $"the schema does not describe '{path}'");
            Assert.True(keys.SetEquals(described!),
                $"at '{path}' the loader accepts [{string.Join(", ", keys)}] but the schema has [{string.Join(", ", described!)}]");
        }
    }

    public static TheoryData<string> ValidFiles()
    {
        var data = new TheoryData<string>();
        foreach (var f in Directory.GetFiles(RepoFiles.Policy(), "*.yaml", SearchOption.AllDirectories)
                     .Concat(Directory.GetFiles(RepoFiles.Fixture("good"), "*.yaml"))
                     .Concat(Directory.GetFiles(Path.Combine(RepoFiles.Root, "samples", "policy-repo"), "*.yaml", SearchOption.AllDirectories)))
        {
            data.Add(Path.GetRelativePath(RepoFiles.Root, f));
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(ValidFiles))]
    public void Every_shipped_policy_validates_against_the_schema(string relative)
    {
        var errors = Schema.Validate(YamlAsJson(Path.Combine(RepoFiles.Root, relative)));
        Assert.True(errors.Count == 0, string.Join("; ", errors.Select(e => $"{e.Path}: {e.Kind}")));
    }

    [Fact]
    public void The_shipped_policies_name_the_schema_for_editors()
    {
        foreach (var file in Directory.GetFiles(RepoFiles.Policy(), "*.yaml", SearchOption.AllDirectories))
        {
            var first = File.ReadLines(file).First();
            Assert.StartsWith("# yaml-language-server: $schema=", first, StringComparison.Ordinal);
            var target = Path.GetFullPath(Path.Combine(Path.GetDirectoryName(file)!, first.Split('=', 2)[1]));
            Assert.Equal(SchemaPath, target);
        }
    }

    // Problems a schema can see: the editor flags them before the loader does.
    [Theory]
    [InlineData("unknown-key-typo")]
    [InlineData("wrong-type-bool")]
    [InlineData("bad-duration")]
    [InlineData("duration-without-unit")]
    [InlineData("rate-without-per-second")]
    [InlineData("threads-out-of-range")]
    [InlineData("bad-recall-action")]
    [InlineData("missing-spec")]
    [InlineData("missing-metadata-name")]
    [InlineData("rule-without-effect")]
    [InlineData("pin-with-access-wait")]
    [InlineData("unknown-api-version")]
    [InlineData("list-where-map-expected")]
    [InlineData("too-many-tags")]
    [InlineData("process-with-path")]
    public void A_bad_file_the_schema_can_judge_is_refused_by_it_too(string name)
    {
        var errors = Schema.Validate(YamlAsJson(RepoFiles.Fixture("bad", name + ".yaml")));
        Assert.NotEmpty(errors);
    }

    /// <summary>Closed maps (additionalProperties: false) of the schema, by loader-style path, with their keys.</summary>
    private static Dictionary<string, SortedSet<string>> SchemaSections()
    {
        var sections = new Dictionary<string, SortedSet<string>>(StringComparer.Ordinal);
        Walk(SchemaJson, "", sections);
        return sections;
    }

    private static void Walk(JToken node, string path, Dictionary<string, SortedSet<string>> sections)
    {
        node = Resolve(node);
        if (node["properties"] is JObject properties && node["additionalProperties"] is JValue { Value: false })
        {
            sections[path] = new SortedSet<string>(properties.Properties().Select(p => p.Name), StringComparer.Ordinal);
            foreach (var property in properties.Properties())
            {
                var child = path.Length == 0 ? property.Name : $"{path}.{property.Name}";
                var value = Resolve(property.Value);
                Walk(value, child, sections);
                if (value["items"] is { } items)
                {
                    Walk(items, child + "[]", sections);
                }
            }
        }
    }

    private static JToken Resolve(JToken node)
    {
        while (true)
        {
            if (node["$ref"] is JValue { Value: string reference })
            {
                node = SchemaJson.SelectToken(reference.TrimStart('#').Replace('/', '.').TrimStart('.'))!;
            }
            else if (node["allOf"] is JArray { Count: 1 } all)
            {
                node = all[0];
            }
            else
            {
                return node;
            }
        }
    }

    /// <summary>A YAML file as the JSON an editor's YAML language server validates (YAML 1.2 core schema for plain scalars).</summary>
    private static JToken YamlAsJson(string path)
    {
        var stream = new YamlStream();
        using (var reader = new StreamReader(path))
        {
            stream.Load(reader);
        }
        return stream.Documents.Count == 0 ? JValue.CreateNull() : ToJson(stream.Documents[0].RootNode);
    }

    private static JToken ToJson(YamlNode node) => node switch
    {
        YamlMappingNode map => new JObject(map.Children.Select(c => new JProperty(((YamlScalarNode)c.Key).Value!, ToJson(c.Value)))),
        YamlSequenceNode list => new JArray(list.Children.Select(ToJson)),
        YamlScalarNode { Style: YamlDotNet.Core.ScalarStyle.Plain } s => Plain(s.Value ?? ""),
        YamlScalarNode s => new JValue(s.Value),
        _ => throw new NotSupportedException(node.GetType().Name),
    };

    private static JToken Plain(string text)
    {
        if (text is "" or "~" or "null" or "Null" or "NULL")
        {
            return JValue.CreateNull();
        }
        if (text is "true" or "True" or "TRUE" or "false" or "False" or "FALSE")
        {
            return new JValue(text[0] is 't' or 'T');
        }
        if (long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var whole))
        {
            return new JValue(whole);
        }
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out var number) && !text.Contains('_', StringComparison.Ordinal))
        {
            return new JValue(number);
        }
        return new JValue(text);
    }
}
