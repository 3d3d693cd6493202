using System.Globalization;
using System.Management.Automation;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Hot reload: a saved policy takes effect without remounting; a broken save is refused and the last good policy stays.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class PolicyReloadTests(S3ServerFixture s3) : ServiceTests
{

    [Fact]
    public async Task Multipart_settings_saved_in_the_policy_take_effect_for_the_next_upload_without_a_restart()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var bytes = GeoDrive.TestSupport.DriveRig.RandomBytes(12 << 20, 12);
        await File.WriteAllBytesAsync(d.Mounted("before.bin"), bytes);
        await DriveScenario.EventuallyAsync(() => StateOf(d, "before.bin") == "Cached", "before.bin Cached");
        Assert.DoesNotContain("-", (await d.Bucket_.HeadAsync("before.bin"))!.ETag, StringComparison.Ordinal); // one PUT (threshold 64 MiB)

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s") + """

              transfer: { uploadThreads: 2, restoreThreads: 2, multipart: { threshold: 5MiB, partSize: 5MiB, uploadThreads: 2 } }
            """);
        await DriveScenario.EventuallyAsync(() => Service.ReadLog().Contains("Policy reloaded", StringComparison.Ordinal), "the reload", seconds: 10);
        await File.WriteAllBytesAsync(d.Mounted("after.bin"), bytes);
        await DriveScenario.EventuallyAsync(() => StateOf(d, "after.bin") == "Cached", "after.bin Cached");

        Assert.EndsWith("-3\"", (await d.Bucket_.HeadAsync("after.bin"))!.ETag, StringComparison.Ordinal); // three parts of 5 MiB at most
        Assert.Equal(bytes, await d.ObjectBytesAsync("after.bin"));
    }

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
        // The administrator reads it too, as an event of the drive with its error id and file:line.
        var refusal = Refusals(d).Single();
        Assert.Equal("PolicyUnknownKey", refusal.Properties["ErrorId"].Value);
        Assert.Contains($"{d.PolicyPath}:5:", (string)refusal.Properties["Message"].Value, StringComparison.Ordinal);

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
        // The last good policy has a rule of its own (no default excludes *.skip), to see it still applies at the end.
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.tmp", "**/*.skip" ]"""));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var corpus = Directory.GetFiles(Path.Combine(RepoRoot.Path, "tests/fixtures/policies/bad"), "*.yaml").Order(StringComparer.Ordinal).ToList();
        Assert.True(corpus.Count >= 30, $"the corpus has {corpus.Count} files");

        foreach (var bad in corpus)
        {
            // "<ErrorId> <line>:<column> [message fragment]", as BadPolicyCorpusTests reads it.
            var expected = (await File.ReadAllTextAsync(Path.ChangeExtension(bad, ".expected"))).Trim().Split(' ', 3);
            var refusedBefore = Refusals(d).Count;
            await File.WriteAllTextAsync(d.PolicyPath, await File.ReadAllTextAsync(bad));
            await DriveScenario.EventuallyAsync(() => Refusals(d).Count > refusedBefore, $"the refusal of {Path.GetFileName(bad)}", seconds: 10);

            var refusal = Refusals(d)[^1];
            var message = (string)refusal.Properties["Message"].Value;
            Assert.Equal((Path.GetFileName(bad), expected[0]), (Path.GetFileName(bad), (string)refusal.Properties["ErrorId"].Value));
            Assert.Contains($"{d.PolicyPath}:{expected[1]}: ", message, StringComparison.Ordinal);
            Assert.Contains(expected.Length > 2 ? expected[2] : "", message, StringComparison.Ordinal);
        }

        await File.WriteAllTextAsync(d.Mounted("after.skip"), "local only");
        await File.WriteAllTextAsync(d.Mounted("after.txt"), "still serving");
        Assert.Equal("Excluded", StateOf(d, "after.skip"));
        await DriveScenario.EventuallyAsync(() => StateOf(d, "after.txt") == "Cached", "after.txt Cached");
        Assert.Equal("still serving"u8.ToArray(), await d.ObjectBytesAsync("after.txt"));
        Assert.Null(await d.Bucket_.HeadAsync("after.skip"));
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task A_policy_file_cut_short_while_the_service_was_stopped_starts_the_drive_with_the_last_good_policy_until_it_is_repaired()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.tmp", "**/*.skip" ]"""));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        // The service's own copy, beside drives.json, readable by the service's user only.
        var copy = Path.Combine(Service.HomePath, "policies", d.Name + ".json");
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(copy));

        // The machine stopped while an editor was saving: the file ends in the middle of a line.
        await RestartServiceAsync(() =>
        {
            var text = File.ReadAllText(d.PolicyPath);
            File.WriteAllText(d.PolicyPath, text[..(text.IndexOf("excludes:", StringComparison.Ordinal) + "excludes: [ \"**/*.t".Length)]);
        });

        var drive = Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()).Single();
        Assert.True((bool)drive.Properties["Mounted"].Value, $"the drive is not mounted: {drive.Properties["LastError"].Value}");
        await File.WriteAllTextAsync(d.Mounted("kept.skip"), "local only, by the last good policy");
        Assert.Equal("Excluded", StateOf(d, "kept.skip"));
        var started = Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Policy", d.Variables())
            .Single(e => ((string)e.Properties["Message"].Value).Contains("last good policy", StringComparison.Ordinal));
        Assert.Equal("PolicySyntax", started.Properties["ErrorId"].Value);
        Assert.Contains($"{d.PolicyPath}:", (string)started.Properties["Message"].Value, StringComparison.Ordinal);
        // The log line follows the event (the console logger writes on its own thread).
        await DriveScenario.EventuallyAsync(() => Service.ReadLog().Contains("PolicySyntax", StringComparison.Ordinal), "the refusal in the service log", seconds: 10);

        // Repaired, with a change of its own: in force as after any save.
        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.tmp", "**/*.other" ]"""));
        await DriveScenario.EventuallyAsync(() => Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Policy", d.Variables())
            .Any(e => ((string)e.Properties["Message"].Value).StartsWith("Policy reloaded", StringComparison.Ordinal)), "the reload of the repaired file", seconds: 10);
        await File.WriteAllTextAsync(d.Mounted("new.other"), "local only, by the repaired policy");
        await File.WriteAllTextAsync(d.Mounted("now.skip"), "uploaded: the repaired policy does not exclude it");
        Assert.Equal("Excluded", StateOf(d, "new.other"));
        await DriveScenario.EventuallyAsync(() => StateOf(d, "now.skip") == "Cached", "now.skip Cached");
    }

    /// <summary>The drive's policy events that refused a change, oldest first, as Get-CloudDriveEvent shows them.</summary>
    private List<PSObject> Refusals(DriveScenario d) =>
        Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Policy", d.Variables())
            .Where(e => ((string)e.Properties["Message"].Value).StartsWith("Policy change refused", StringComparison.Ordinal))
            .OrderBy(e => Convert.ToInt64(e.Properties["Id"].Value, CultureInfo.InvariantCulture))
            .ToList();
}
