using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Hot reload: a saved policy takes effect without remounting; a broken save is refused and the last good policy stays.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class PolicyReloadTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();
    private PowerShellSession _ps = null!;

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        _ps = new PowerShellSession(_service.SocketPath);
    }

    public async Task DisposeAsync()
    {
        _ps.Dispose();
        await _service.DisposeAsync();
    }

    private string StateOf(DriveScenario d, string path) =>
        _ps.Invoke("(Get-CloudFile -Drive $name -Path $p).State", new Dictionary<string, object?> { ["name"] = d.Name, ["p"] = path })
            .Single().ToString();

    [Fact]
    public async Task A_saved_policy_takes_effect_within_seconds_and_a_broken_save_keeps_the_last_good_one()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(_ps.LastErrors);

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.tmp", "**/*.skip" ]"""));
        await DriveScenario.EventuallyAsync(() => _service.ReadLog().Contains("Policy reloaded", StringComparison.Ordinal), "the reload", seconds: 10);
        await File.WriteAllTextAsync(d.Mounted("first.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "first.skip"));

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s").Replace("accessWait", "acessWait", StringComparison.Ordinal));
        await DriveScenario.EventuallyAsync(() => _service.ReadLog().Contains("PolicyUnknownKey", StringComparison.Ordinal), "the refusal", seconds: 10);
        Assert.Contains("policy.yaml:5:", _service.ReadLog(), StringComparison.Ordinal);

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
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(_ps.LastErrors);
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
        _service.ReadLog().Split('\n').Count(line => line.Contains("Policy change refused", StringComparison.Ordinal));
}
