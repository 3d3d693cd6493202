using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Hot reload: a saved policy takes effect without remounting; a broken save is refused and the last good policy stays.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class PolicyReloadTests(S3ServerFixture s3) : ServiceTests
{

    [Fact]
    public async Task A_saved_policy_takes_effect_within_seconds_and_a_broken_save_keeps_the_last_good_one()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.tmp", "**/*.skip" ]"""));
        await DriveScenario.EventuallyAsync(() => Service.ReadLog().Contains("Policy reloaded", StringComparison.Ordinal), "the reload", seconds: 10);
        await File.WriteAllTextAsync(d.Mounted("first.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "first.skip"));

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s").Replace("accessWait", "acessWait", StringComparison.Ordinal));
        await DriveScenario.EventuallyAsync(() => Service.ReadLog().Contains("PolicyUnknownKey", StringComparison.Ordinal), "the refusal", seconds: 10);
        Assert.Contains("policy.yaml:5:", Service.ReadLog(), StringComparison.Ordinal);

        await File.WriteAllTextAsync(d.Mounted("second.skip"), "still local only");
        await File.WriteAllTextAsync(d.Mounted("report.txt"), "the drive goes on");
        Assert.Equal("Excluded", StateOf(d, "second.skip"));
        await DriveScenario.EventuallyAsync(() => StateOf(d, "report.txt") == "Cached", "report.txt Cached");
        Assert.Equal("the drive goes on"u8.ToArray(), await d.ObjectBytesAsync("report.txt"));
        Assert.Null(await d.Bucket_.HeadAsync("second.skip"));
    }

    [Fact]
    public async Task No_file_of_the_bad_policy_corpus_stops_a_running_drive()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var corpus = Directory.GetFiles(Path.Combine(RepoRoot.Path, "tests/fixtures/policies/bad"), "*.yaml").Order(StringComparer.Ordinal).ToList();

        foreach (var bad in corpus)
        {
            var refusedBefore = Refusals();
            await File.WriteAllTextAsync(d.PolicyPath, await File.ReadAllTextAsync(bad));
            await DriveScenario.EventuallyAsync(() => Refusals() > refusedBefore, $"the refusal of {Path.GetFileName(bad)}", seconds: 10);
        }

        await File.WriteAllTextAsync(d.Mounted("after.txt"), "still serving");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "after.txt") == "Cached", "after.txt Cached");
        Assert.Equal("still serving"u8.ToArray(), await d.ObjectBytesAsync("after.txt"));
        Assert.True(corpus.Count >= 25, $"the corpus has {corpus.Count} files");
    }

    private int Refusals() =>
        Service.ReadLog().Split('\n').Count(line => line.Contains("Policy change refused", StringComparison.Ordinal));
}
