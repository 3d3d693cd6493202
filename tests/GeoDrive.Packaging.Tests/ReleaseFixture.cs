using System.Diagnostics;
using System.IO.Compression;
using GeoDrive.TestSupport;

namespace GeoDrive.Packaging.Tests;

[CollectionDefinition(Name)]
public sealed class ReleaseCollection : ICollectionFixture<ReleaseFixture>
{
    public const string Name = "release";
}

/// <summary>
/// scripts/release.sh run once for the module's part (a Release build of the module and its Gallery package),
/// into a folder of its own; the self-contained publishes are not made here (about a minute each).
/// </summary>
public sealed class ReleaseFixture : IDisposable
{
    private readonly TempDirectory _temp = new("release");

    public ReleaseFixture()
    {
        OutPath = _temp.CreateSubdirectory("out");
        var watch = Stopwatch.StartNew();
        try
        {
            Script.Run("scripts/release.sh", "--only", "module", "--out", OutPath);
        }
        catch
        {
            _temp.Dispose();   // xunit disposes no fixture whose constructor threw
            throw;
        }
        Elapsed = watch.Elapsed;
        Version = ManifestVersion(File.ReadAllText(Path.Combine(RepositoryRoot.Path, "GeoDrive.psd1")));
        PackagePath = Path.Combine(OutPath, $"GeoDrive.{Version}.nupkg");
    }

    public string OutPath { get; }

    public string Version { get; }

    public string PackagePath { get; }

    /// <summary>How long the module's release took (printed by the tests: CI time).</summary>
    public TimeSpan Elapsed { get; }

    public IReadOnlyList<string> Entries()
    {
        using var zip = ZipFile.OpenRead(PackagePath);
        return [.. zip.Entries.Select(e => e.FullName)];
    }

    public string ReadEntry(string name)
    {
        using var zip = ZipFile.OpenRead(PackagePath);
        using var reader = new StreamReader(zip.GetEntry(name)!.Open());
        return reader.ReadToEnd();
    }

    /// <summary>
    /// The package unpacked as Install-PSResource lays it out: &lt;modules&gt;/GeoDrive/&lt;version&gt;, without NuGet's own parts.
    /// </summary>
    public string InstallTo(string modulesPath)
    {
        var target = Path.Combine(modulesPath, "GeoDrive", Version);
        using var zip = ZipFile.OpenRead(PackagePath);
        foreach (var entry in zip.Entries)
        {
            if (entry.FullName.EndsWith(".nuspec", StringComparison.Ordinal) || entry.FullName == "[Content_Types].xml"
                || entry.FullName.StartsWith("_rels/", StringComparison.Ordinal) || entry.FullName.StartsWith("package/", StringComparison.Ordinal))
            {
                continue;
            }
            var path = Path.Combine(target, entry.FullName);
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            entry.ExtractToFile(path);
        }
        return target;
    }

    public static string ManifestVersion(string psd1) =>
        System.Text.RegularExpressions.Regex.Match(psd1, @"ModuleVersion\s*=\s*'([^']+)'").Groups[1].Value;

    public void Dispose() => _temp.Dispose();
}

/// <summary>The repository's scripts, run with bash from the repository root as an administrator would.</summary>
internal static class Script
{
    public static string Run(string script, params string[] arguments)
    {
        var (exitCode, output, error) = Command.Run("bash", [Path.Combine(RepositoryRoot.Path, script), .. arguments]);
        return exitCode == 0 ? output : throw new InvalidOperationException($"{script} {string.Join(' ', arguments)} exited {exitCode}:\n{output}\n{error}");
    }

    public static (int ExitCode, string Output, string Error) Try(string script, params string[] arguments) =>
        Command.Run("bash", [Path.Combine(RepositoryRoot.Path, script), .. arguments]);
}
