using System.Xml.Linq;

namespace GeoDrive.Module.Tests;

/// <summary>Every GeoDrive type a cmdlet declares as output has a view in GeoDrive.Format.ps1xml.</summary>
[Collection(ModuleCollection.Name)]
public sealed class FormatTests(ModuleSession session)
{
    [Fact]
    public void Every_GeoDrive_output_type_has_a_format_view()
    {
        var viewed = XDocument.Load(RepoRoot.Combine("module", "GeoDrive.Format.ps1xml"))
            .Descendants("TypeName").Select(t => t.Value.Trim()).ToHashSet(StringComparer.Ordinal);
        var declared = HelpTests.ManifestList("CmdletsToExport")
            .SelectMany(name => session.Command(name).OutputType)
            .Select(t => t.Name)
            .Where(name => name.StartsWith("GeoDrive.", StringComparison.Ordinal))
            .Distinct()
            .ToList();

        Assert.Contains("GeoDrive.Api.DriveEventInfo", declared);
        Assert.All(declared, type => Assert.Contains(type, viewed));
    }
}
