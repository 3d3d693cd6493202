using System.Management.Automation;
using System.Management.Automation.Runspaces;
using System.Security.Cryptography;
using System.Xml.Linq;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Packaging.Tests;

/// <summary>scripts/release.sh's module package, as the PowerShell Gallery and an administrator's PowerShell take it.</summary>
[Collection(ReleaseCollection.Name)]
public sealed class ReleaseScriptTests(ReleaseFixture release, ITestOutputHelper output)
{
    [Fact]
    public void The_module_package_holds_the_manifest_at_its_root_with_the_assemblies_formats_help_and_DSC_files_it_names()
    {
        output.WriteLine($"release.sh --only module took {release.Elapsed.TotalSeconds:F1} s");
        var entries = release.Entries();

        Assert.Contains("GeoDrive.nuspec", entries);
        Assert.Contains("GeoDrive.psd1", entries);
        foreach (var file in new[]
                 {
                     "module/bin/GeoDrive.Commands.dll", "module/bin/GeoDrive.Api.dll", "module/bin/GeoDrive.Core.dll",
                     "module/bin/GeoDrive.Policies.dll", "module/bin/YamlDotNet.dll", "module/GeoDrive.Format.ps1xml",
                     "module/bin/en-US/GeoDrive.Commands.dll-Help.xml", "module/bin/en-US/about_GeoDrive.help.txt",
                     "module/dsc/CloudDriveDsc.psm1", "module/dsc/GeoDrive.CloudDrive.dsc.resource.json",
                 })
        {
            Assert.Contains(file, entries);
        }
        // The package is what the module loads, nothing of the build besides.
        Assert.DoesNotContain(entries, e => e.EndsWith(".pdb", StringComparison.Ordinal) || e.EndsWith(".deps.json", StringComparison.Ordinal));
        Assert.Equal(File.ReadAllText(Path.Combine(RepositoryRoot.Path, "GeoDrive.psd1")), release.ReadEntry("GeoDrive.psd1"));
    }

    [Fact]
    public void The_package_installs_imports_and_gives_every_cmdlet_the_help_and_formats_of_the_repository()
    {
        using var modules = new TempDirectory("psmodules");
        var installed = release.InstallTo(modules.Path);
        using var runspace = RunspaceFactory.CreateRunspace(InitialSessionState.CreateDefault2());
        runspace.Open();

        var module = Invoke(runspace, $"Import-Module '{Path.Combine(installed, "GeoDrive.psd1")}' -PassThru -ErrorAction Stop").Single().BaseObject as PSModuleInfo;
        Assert.NotNull(module);
        Assert.Equal(release.Version, module.Version.ToString(3));
        Assert.Equal(Path.GetFullPath(installed), Path.GetFullPath(module.ModuleBase));
        Assert.Equal(27, module.ExportedCmdlets.Count);
        var formats = Assert.Single(module.ExportedFormatFiles);
        Assert.StartsWith(installed, formats, StringComparison.Ordinal);

        // The help beside the installed assembly (en-US), with the examples the repository's help file has.
        var examples = Invoke(runspace, "(Get-Help Start-GeoDriveService -Full).examples.example.Count").Single();
        Assert.True((int)examples.BaseObject >= 2);
        var description = string.Join(" ", Invoke(runspace, "(Get-Help Start-GeoDriveService -Full).description | ForEach-Object { $_.Text }"));
        Assert.Contains("systemd", description, StringComparison.Ordinal);
    }

    [Fact]
    public void The_nuspec_names_the_module_its_version_and_tags_each_cmdlet_and_the_DSC_resource_as_the_Gallery_searches_them()
    {
        var nuspec = XDocument.Parse(release.ReadEntry("GeoDrive.nuspec"));
        XNamespace ns = nuspec.Root!.GetDefaultNamespace();
        var metadata = nuspec.Root.Element(ns + "metadata")!;
        Assert.Equal("GeoDrive", metadata.Element(ns + "id")!.Value);
        Assert.Equal(release.Version, metadata.Element(ns + "version")!.Value);
        Assert.Equal("GeoDrive contributors", metadata.Element(ns + "authors")!.Value);
        Assert.False(string.IsNullOrWhiteSpace(metadata.Element(ns + "description")!.Value));
        var tags = metadata.Element(ns + "tags")!.Value.Split(' ', StringSplitOptions.RemoveEmptyEntries);

        Assert.Contains("PSModule", tags);
        Assert.Contains("PSEdition_Core", tags);
        Assert.Contains("PSIncludes_Cmdlet", tags);
        Assert.Contains("PSIncludes_DscResource", tags);
        Assert.Contains("PSDscResource_CloudDrive", tags);
        var cmdlets = tags.Where(t => t.StartsWith("PSCmdlet_", StringComparison.Ordinal)).Select(t => t["PSCmdlet_".Length..]).ToList();
        Assert.Equal(27, cmdlets.Count);
        Assert.Contains("Start-GeoDriveService", cmdlets);
        Assert.Contains("Sync-CloudDrive", cmdlets);
        Assert.All(cmdlets, c => Assert.Contains("PSCommand_" + c, tags));
        Assert.Equal(tags.Length, tags.Distinct(StringComparer.OrdinalIgnoreCase).Count());
    }

    [Fact]
    public void SHA256SUMS_lists_the_package_with_its_hash_and_sha256sum_checks_it()
    {
        var lines = File.ReadAllLines(Path.Combine(release.OutPath, "SHA256SUMS"));
        var line = Assert.Single(lines);
        var hash = Convert.ToHexStringLower(SHA256.HashData(File.ReadAllBytes(release.PackagePath)));
        Assert.Equal($"{hash}  GeoDrive.{release.Version}.nupkg", line);

        var (exitCode, checkOutput, _) = GeoDrive.TestSupport.Command.Run("bash", "-c", $"cd '{release.OutPath}' && sha256sum -c SHA256SUMS");
        Assert.Equal(0, exitCode);
        Assert.Contains($"GeoDrive.{release.Version}.nupkg: OK", checkOutput, StringComparison.Ordinal);
    }

    private static List<PSObject> Invoke(Runspace runspace, string script)
    {
        using var ps = PowerShell.Create();
        ps.Runspace = runspace;
        ps.AddScript(script);
        var result = ps.Invoke().ToList();
        if (ps.HadErrors && ps.Streams.Error.Count > 0)
        {
            throw new InvalidOperationException(string.Join("\n", ps.Streams.Error.Select(e => e.ToString())));
        }
        return result;
    }
}
