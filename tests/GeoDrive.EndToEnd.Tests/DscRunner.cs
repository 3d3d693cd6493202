using System.Diagnostics;
using System.Text.Json;
using System.Text.Json.Nodes;
using YamlDotNet.RepresentationModel;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Runs the DSC v3 resource manifest's commands exactly as the manifest declares them (executable, args,
/// JSON on stdin, the manifest's folder as working directory, as dsc does), and applies a v3
/// configuration document's GeoDrive/CloudDrive resources through them (`dsc` itself is not served here:
/// only whole-string `[parameters('x')]` expressions are evaluated, which is all the sample uses).
/// Where pwsh is not installed, `pwsh` resolves to scripts/gdpwsh (GeoDrive.PSHost), as docs/dsc.md says.
/// </summary>
public sealed class DscRunner(string socketPath, string scratch)
{
    public static string ManifestPath => Path.Combine(RepoRoot.Path, "module/dsc/GeoDrive.CloudDrive.dsc.resource.json");

    public static string HostDll
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains("/Release/", StringComparison.Ordinal) ? "Release" : "Debug";
            return Path.Combine(RepoRoot.Path, "module/host/GeoDrive.PSHost/bin", configuration, "net10.0/GeoDrive.PSHost.dll");
        }
    }

    public sealed record Result(int ExitCode, string Output, string Errors)
    {
        public JsonObject Json => JsonNode.Parse(Output.Trim().Split('\n')[^1])!.AsObject();
    }

    /// <summary>get, set or test, with <paramref name="input"/> on stdin.</summary>
    public Result Invoke(string operation, JsonObject input)
    {
        using var manifest = JsonDocument.Parse(File.ReadAllText(ManifestPath));
        var command = manifest.RootElement.GetProperty(operation);
        Assert.Equal("stdin", command.GetProperty("input").GetString());
        var executable = command.GetProperty("executable").GetString()!;
        var args = command.GetProperty("args").EnumerateArray().Select(a => a.GetString()!).ToList();
        return Run(executable, args, Path.GetDirectoryName(ManifestPath)!, input.ToJsonString());
    }

    /// <summary>Runs a PowerShell script file through scripts/gdpwsh, from the repository root.</summary>
    public Result RunScript(string script, IEnumerable<string> args, IDictionary<string, string>? environment = null) =>
        Run("pwsh", ["-NoProfile", "-File", script, .. args], RepoRoot.Path, null, environment);

    /// <summary>`dsc config set`: each GeoDrive/CloudDrive resource of the document, with the parameters given.</summary>
    public List<Result> ApplyConfiguration(string documentPath, IReadOnlyDictionary<string, object> parameters)
    {
        var yaml = new YamlStream();
        using (var reader = new StreamReader(documentPath))
        {
            yaml.Load(reader);
        }
        var root = (YamlMappingNode)yaml.Documents[0].RootNode;
        var values = new Dictionary<string, JsonNode?>();
        foreach (var (key, definition) in (YamlMappingNode)root["parameters"])
        {
            var name = ((YamlScalarNode)key).Value!;
            values[name] = parameters.TryGetValue(name, out var given)
                ? JsonSerializer.SerializeToNode(given)
                : ((YamlMappingNode)definition).Children.TryGetValue(new YamlScalarNode("defaultValue"), out var d) ? ToJson(d, values) : null;
        }
        var results = new List<Result>();
        foreach (YamlMappingNode resource in (YamlSequenceNode)root["resources"])
        {
            Assert.Equal("GeoDrive/CloudDrive", ((YamlScalarNode)resource["type"]).Value);
            var properties = ToJson(resource["properties"], values)!.AsObject();
            results.Add(Invoke("set", properties));
        }
        return results;
    }

    private static JsonNode? ToJson(YamlNode node, IReadOnlyDictionary<string, JsonNode?> parameters) => node switch
    {
        YamlMappingNode map => new JsonObject(map.Children.Select(c => KeyValuePair.Create(((YamlScalarNode)c.Key).Value!, ToJson(c.Value, parameters)))),
        YamlSequenceNode list => new JsonArray(list.Children.Select(c => ToJson(c, parameters)).ToArray()),
        YamlScalarNode { Value: { } text } when text.StartsWith("[parameters('", StringComparison.Ordinal) && text.EndsWith("')]", StringComparison.Ordinal) =>
            parameters[text["[parameters('".Length..^"')]".Length]]?.DeepClone(),
        YamlScalarNode { Value: "true" or "false" } b => JsonValue.Create(b.Value == "true"),
        YamlScalarNode s => JsonValue.Create(s.Value),
        _ => null,
    };

    private Result Run(string executable, IEnumerable<string> args, string workingDirectory, string? stdin, IDictionary<string, string>? environment = null)
    {
        var shims = Path.Combine(scratch, "bin");
        Directory.CreateDirectory(shims);
        var path = Environment.GetEnvironmentVariable("PATH") ?? "";
        if (executable == "pwsh" && !File.Exists(Path.Combine(shims, "pwsh")) && !path.Split(':').Any(p => File.Exists(Path.Combine(p, "pwsh"))))
        {
            File.CreateSymbolicLink(Path.Combine(shims, "pwsh"), Path.Combine(RepoRoot.Path, "scripts/gdpwsh"));
        }
        path = shims + ":" + path;
        var resolved = path.Split(':').Select(p => Path.Combine(p, executable)).FirstOrDefault(File.Exists)
            ?? throw new FileNotFoundException($"'{executable}' is not on PATH");
        var psi = new ProcessStartInfo(resolved, args)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.Environment["PATH"] = path;
        psi.Environment["GEODRIVE_SOCKET"] = socketPath;
        psi.Environment["GEODRIVE_PSHOST"] = HostDll;
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            psi.Environment[name] = value;
        }
        using var process = Process.Start(psi)!;
        var errors = process.StandardError.ReadToEndAsync();
        if (stdin is not null)
        {
            process.StandardInput.Write(stdin);
        }
        process.StandardInput.Close();
        var output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return new Result(process.ExitCode, output, errors.Result);
    }
}
