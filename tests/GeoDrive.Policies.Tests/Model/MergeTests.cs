using GeoDrive.Core.Errors;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests.Model;

public sealed class MergeTests
{
    private static PolicyDocument Doc(string file, string spec) => PolicyLoader.Parse($"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: {"{"} name: {Path.GetFileNameWithoutExtension(file)} {"}"}
        {spec}
        """, file);

    [Fact]
    public void With_no_files_every_value_is_the_documented_default()
    {
        var p = EffectivePolicy.Merge([]);

        Assert.True(p.StubbingEnabled.Value);
        Assert.Equal(TimeSpan.FromDays(30), p.AccessWait.Value);
        Assert.Equal(0, p.MinimumSize.Value);
        Assert.Equal(CacheLevel.OfPercent(90), p.StubAbove.Value);
        Assert.Equal(CacheLevel.OfPercent(80), p.StubUntil.Value);
        Assert.Equal(CacheLevel.OfBytes(0), p.ReserveFree.Value);
        Assert.Equal(UploadMode.Async, p.UploadMode.Value);
        Assert.Equal(TimeSpan.FromSeconds(30), p.Settle.Value);
        Assert.Equal(TimeSpan.FromMinutes(5), p.UpdateWait.Value);
        Assert.Equal(0, p.UploadLimit.Value);
        Assert.Equal(0, p.DownloadLimit.Value);
        Assert.Equal(8, p.UploadThreads.Value);
        Assert.Equal(8, p.RestoreThreads.Value);
        Assert.Equal(64L << 20, p.MultipartThreshold.Value);
        Assert.Equal(16L << 20, p.PartSize.Value);
        Assert.Equal(4, p.MultipartUploadThreads.Value);
        Assert.Equal(4, p.MultipartRestoreThreads.Value);
        Assert.Empty(p.Excludes);
        Assert.Empty(p.StubbingRules);
        Assert.Empty(p.RecallJobs);
        Assert.True(p.Settle.Origin.IsDefault);
        Assert.Equal("(default)", p.Settle.Origin.ToString());
        Assert.Equal(p.Settle.Value, EffectivePolicy.Defaults.Settle.Value);
    }

    [Fact]
    public void A_later_file_overrides_single_values_and_each_value_remembers_its_file_and_line()
    {
        var first = Doc("base.yaml", "spec:\n  upload: { settle: 10s, updateWait: 1m }\n  stubbing: { accessWait: 7d }\n");
        var second = Doc("site.yaml", "spec:\n  upload:\n    settle: 2s\n");

        var p = EffectivePolicy.Merge([first, second]);

        Assert.Equal(TimeSpan.FromSeconds(2), p.Settle.Value);
        Assert.Equal(new SourceLocation("site.yaml", 6, 13), p.Settle.Origin);
        Assert.Equal(TimeSpan.FromMinutes(1), p.UpdateWait.Value);
        Assert.Equal("base.yaml", p.UpdateWait.Origin.File);
        Assert.Equal(new SourceLocation("base.yaml", 6, 27), p.AccessWait.Origin);
        Assert.True(p.StubbingEnabled.Origin.IsDefault);
        Assert.Equal([first, second], p.Documents);
    }

    [Fact]
    public void Lists_concatenate_in_file_order()
    {
        var first = Doc("base.yaml", "spec:\n  excludes: [ \"*.tmp\" ]\n  stubbing: { rules: [ { paths: [a], pin: true } ] }\n  recallJobs: [ { name: one, paths: [a], schedule: \"0 6 * * *\" } ]\n");
        var second = Doc("site.yaml", "spec:\n  excludes: [ \"Scratch/\", \"*.bak\" ]\n  stubbing: { rules: [ { paths: [b], accessWait: 1d } ] }\n  recallJobs: [ { name: two, paths: [b], schedule: \"0 7 * * *\" } ]\n");

        var p = EffectivePolicy.Merge([first, second]);

        Assert.Equal(["*.tmp", "Scratch/", "*.bak"], p.Excludes.Select(e => e.Pattern));
        Assert.Equal(["base.yaml", "site.yaml", "site.yaml"], p.Excludes.Select(e => e.Origin.File));
        Assert.Equal(2, p.StubbingRules.Count);
        Assert.Equal(["one", "two"], p.RecallJobs.Select(j => j.Name.Value));
    }

    [Fact]
    public void The_shipped_default_and_an_override_layer_merge()
    {
        var defaults = PolicyLoader.Load(RepoFiles.Policy("default.yaml"));
        var layer = PolicyLoader.Load(RepoFiles.Fixture("good", "layer-override.yaml"));

        var p = EffectivePolicy.Merge([defaults, layer]);

        Assert.Equal(TimeSpan.FromDays(7), p.AccessWait.Value);
        Assert.EndsWith("layer-override.yaml", p.AccessWait.Origin.File, StringComparison.Ordinal);
        Assert.Equal(TimeSpan.FromMinutes(1), p.Settle.Value);
        Assert.Equal(TimeSpan.FromMinutes(5), p.UpdateWait.Value);
        Assert.EndsWith("default.yaml", p.UpdateWait.Origin.File, StringComparison.Ordinal);
        Assert.Contains(p.Excludes, e => e.Pattern == "Thumbs.db");
        Assert.Equal("Scratch/", p.Excludes[^1].Pattern);
    }

    [Fact]
    public void Thresholds_that_contradict_each_other_across_files_are_refused()
    {
        var first = Doc("base.yaml", "spec:\n  cacheThresholds: { stubAbove: 85%, stubUntil: 70% }\n");
        var second = Doc("site.yaml", "spec:\n  cacheThresholds:\n    stubUntil: 88%\n");

        var ex = Assert.Throws<PolicyException>(() => EffectivePolicy.Merge([first, second]));

        Assert.Equal(ErrorIds.PolicyBadValue, ex.ErrorId);
        Assert.Equal(("site.yaml", 6, 16), (ex.File, ex.Line, ex.Column));
        Assert.Contains("base.yaml:5:33", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void One_recall_job_name_in_two_files_is_refused()
    {
        var first = Doc("base.yaml", "spec:\n  recallJobs: [ { name: prewarm, paths: [a], schedule: \"0 6 * * *\" } ]\n");
        var second = Doc("site.yaml", "spec:\n  recallJobs: [ { name: prewarm, paths: [b], schedule: \"0 7 * * *\" } ]\n");

        var ex = Assert.Throws<PolicyException>(() => EffectivePolicy.Merge([first, second]));

        Assert.Equal("site.yaml", ex.File);
        Assert.Contains("also defined at base.yaml:5", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_document_is_immutable_and_unchanged_by_merging()
    {
        var doc = Doc("base.yaml", "spec:\n  excludes: [ \"*.tmp\" ]\n");
        var p = EffectivePolicy.Merge([doc, doc]);
        Assert.Equal(2, p.Excludes.Count);
        Assert.Single(doc.Excludes);
    }
}
