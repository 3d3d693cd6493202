using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// What the service's log carries at its default level: not a line per file uploaded, stubbed or recalled (those are
/// the drive's events), so that a busy drive does not flood the journal into its rate limit; a policy's reload still,
/// and every routine event again once an administrator sets the level to Debug (docs/decisions/0035-routine-events-off-the-log.md).
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class ServiceLogTests(S3ServerFixture s3) : ServiceTests
{
    private string[] LinesNaming(string name) =>
        Service.ReadLog().Split('\n').Where(l => l.Contains(name, StringComparison.Ordinal)).ToArray();

    [Fact]
    public async Task A_files_upload_stub_and_recall_are_events_but_not_log_lines_until_the_level_is_Debug()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("ledger-2026.txt"), "the ledger");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "ledger-2026.txt") == "Cached", "ledger-2026.txt Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path ledger-2026.txt -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal("the ledger", await File.ReadAllTextAsync(d.Mounted("ledger-2026.txt")));
        var events = Ps.Invoke("Get-CloudDriveEvent -Drive $name -Path ledger-2026.txt", d.Variables())
            .Select(e => e.Properties["Kind"].Value.ToString()!).Order().ToArray();
        Assert.Equal(["Recall", "Stub", "Upload"], events);

        // The console logger writes in order on its own thread: once a later line is in, an earlier one would be too.
        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "1s"));
        await DriveScenario.EventuallyAsync(() => Service.ReadLog().Contains("Policy reloaded", StringComparison.Ordinal), "the reload in the log", seconds: 10);
        Assert.Empty(LinesNaming("ledger-2026.txt"));

        await RestartServiceAsync(() => Service.Environment["Logging__LogLevel__GeoDrive"] = "Debug");
        await DriveScenario.EventuallyAsync(() => (bool)Ps.Invoke("(Get-CloudDrive -Name $name).Mounted", d.Variables()).Single().BaseObject, "the drive mounted again");
        await File.WriteAllTextAsync(d.Mounted("ledger-2027.txt"), "next year's");
        await DriveScenario.EventuallyAsync(() => LinesNaming("ledger-2027.txt").Any(l => l.Contains("dbug", StringComparison.Ordinal) && l.Contains("Upload", StringComparison.Ordinal)),
            "ledger-2027.txt's upload in the log at Debug", seconds: 30);
    }
}
