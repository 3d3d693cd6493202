using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests;

/// <summary>The policies shipped in policies/ are valid and say what their comments promise.</summary>
public sealed class ShippedPoliciesTests
{
    public static TheoryData<string> ShippedFiles()
    {
        var data = new TheoryData<string>();
        foreach (var f in Directory.GetFiles(RepoFiles.Policy(), "*.yaml", SearchOption.AllDirectories).Order(StringComparer.Ordinal))
        {
            data.Add(Path.GetRelativePath(RepoFiles.Policy(), f));
        }
        foreach (var f in Directory.GetFiles(RepoFiles.Fixture("good"), "*.yaml").Order(StringComparer.Ordinal))
        {
            data.Add(Path.GetRelativePath(RepoFiles.Policy(), f));
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(ShippedFiles))]
    public void Every_shipped_policy_and_good_fixture_is_valid(string relative)
    {
        var path = Path.GetFullPath(Path.Combine(RepoFiles.Policy(), relative));
        Assert.Empty(PolicyLoader.Validate(path));
        Assert.NotNull(PolicyLoader.Load(path));
    }

    [Fact]
    public void The_default_policy_stubs_after_thirty_days_and_never_uploads_clutter()
    {
        var e = new PolicyEvaluator(EffectivePolicy.Merge([PolicyLoader.Load(RepoFiles.Policy("default.yaml"))]));
        Assert.Equal(TimeSpan.FromDays(30), e.AccessWaitFor("Docs/a.docx"));
        Assert.Equal(TimeSpan.FromSeconds(30), e.Settle);
        foreach (var clutter in new[] { "Docs/~$a.docx", "x.tmp", "Photos/Thumbs.db", "Mac/.DS_Store", "desktop.ini", "Docs/.~lock.a.odt#" })
        {
            Assert.True(e.IsExcluded(clutter, isDirectory: false), clutter);
        }
        Assert.False(e.IsExcluded("Docs/a.docx", isDirectory: false));
    }

    [Fact]
    public void The_demo_policy_is_fast()
    {
        var e = new PolicyEvaluator(EffectivePolicy.Merge([PolicyLoader.Load(RepoFiles.Policy("examples", "demo.yaml"))]));
        Assert.Equal(TimeSpan.FromSeconds(2), e.Settle);
        Assert.Equal(TimeSpan.FromMinutes(1), e.AccessWaitFor("a.txt"));
        Assert.True(e.IsExcluded("a.tmp", isDirectory: false));
    }

    [Fact]
    public void The_finance_archive_example_sets_every_section()
    {
        var doc = PolicyLoader.Load(RepoFiles.Policy("examples", "finance-archive.yaml"));
        Assert.Equal("finance-archive", doc.Name.Value);
        Assert.Equal(2, doc.Stubbing.Rules.Count);
        Assert.Equal(CacheLevel.OfPercent(85), doc.CacheThresholds.StubAbove!.Value);
        Assert.Equal(CacheLevel.OfBytes(10L << 30), doc.CacheThresholds.ReserveFree!.Value);
        Assert.Equal(4, doc.Excludes.Count);
        Assert.Single(doc.Metadata);
        Assert.Equal(2, doc.ProcessExcludes.Count);
        Assert.Single(doc.Throttle.Schedule);
        Assert.Equal(128L << 20, doc.Transfer.Multipart.PartSize!.Value);
        Assert.Equal("morning-prewarm", Assert.Single(doc.RecallJobs).Name.Value);
    }
}
