namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Issue 5's conventions against a running service: every state change under -WhatIf leaves the drive,
/// its files and the service as they were (the module tests check the same without a service, where
/// a cmdlet must not even call it); and the pipelines an administrator writes bind by property name.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class WhatIfAndPipelineTests(GeoDrive.TestSupport.S3ServerFixture s3) : ServiceTests
{
    private object? DriveProperty(DriveScenario d, string property) =>
        Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()).Single().Properties[property].Value;

    [Fact]
    public async Task WhatIf_on_every_state_change_leaves_drive_files_and_service_unchanged()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("cached.txt"), "stays cached");
        await File.WriteAllTextAsync(d.Mounted("stub.txt"), "stays a stub");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "cached.txt") == "Cached" && StateOf(d, "stub.txt") == "Cached", "both Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path stub.txt -Confirm:$false", d.Variables());
        Assert.Equal("Stubbed", StateOf(d, "stub.txt"));
        var eventsBefore = Ps.Invoke("Get-CloudDriveEvent -Drive $name", d.Variables()).Count;

        foreach (var command in new[]
                 {
                     "Invoke-ForceStub -Drive $name -Path cached.txt -WhatIf",
                     "Invoke-CloudRecall -Drive $name -Path stub.txt -WhatIf",
                     "Invoke-ForceUpload -Drive $name -Path cached.txt -WhatIf",
                     "Set-CloudFile -Drive $name -Path cached.txt -Pin -WhatIf",
                     "Register-CloudRecallJob -Drive $name -Name nightly -Path stub.txt -Schedule '0 2 * * *' -WhatIf",
                     "Suspend-CloudDrive -Name $name -WhatIf",
                     "Dismount-CloudDrive -Name $name -WhatIf",
                     "Remove-CloudDrive -Name $name -WhatIf",
                     "Stop-GeoDriveService -WhatIf",
                 })
        {
            Ps.Invoke(command, d.Variables());
            Assert.True(Ps.LastErrors.Count == 0, $"{command}: {string.Join("; ", Ps.LastErrors)}");
        }

        Assert.Equal("Cached", StateOf(d, "cached.txt"));
        Assert.Equal("Stubbed", StateOf(d, "stub.txt"));
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("stub.txt")));
        Assert.False((bool)Ps.Invoke("(Get-CloudFile -Drive $name -Path cached.txt).Pinned", d.Variables()).Single().BaseObject);
        Assert.Empty(Ps.Invoke("Get-CloudRecallJob -Drive $name", d.Variables()));
        Assert.Equal(true, DriveProperty(d, "Mounted"));
        Assert.Equal(false, DriveProperty(d, "Suspended"));
        // Nothing was stubbed, recalled, uploaded, pinned or registered: the event log has not grown.
        Assert.Equal(eventsBefore, Ps.Invoke("Get-CloudDriveEvent -Drive $name", d.Variables()).Count);
        Assert.Equal("stays cached", await File.ReadAllTextAsync(d.Mounted("cached.txt")));
    }

    [Fact]
    public async Task Drives_and_files_flow_down_the_pipeline_into_the_cmdlets_that_act_on_them()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("a.pdf"), "first scan");
        await File.WriteAllTextAsync(d.Mounted("b.pdf"), "second scan");
        await File.WriteAllTextAsync(d.Mounted("notes.txt"), "not a scan");
        await DriveScenario.EventuallyAsync(() => new[] { "a.pdf", "b.pdf", "notes.txt" }.All(p => StateOf(d, p) == "Cached"), "all Cached");

        // The issue's own example: drive -> files by pattern -> force-stub.
        var stubbed = Ps.Invoke("Get-CloudDrive -Name $name | Get-CloudFile -Path *.pdf | Invoke-ForceStub -Confirm:$false -PassThru", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(2, stubbed.Count);
        Assert.Equal(("Stubbed", "Stubbed", "Cached"), (StateOf(d, "a.pdf"), StateOf(d, "b.pdf"), StateOf(d, "notes.txt")));

        var recalled = Ps.Invoke("Get-CloudFile -Drive $name -Path *.pdf | Invoke-CloudRecall", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.NotEmpty(recalled);
        Assert.Equal(("Cached", "Cached"), (StateOf(d, "a.pdf"), StateOf(d, "b.pdf")));
        Assert.Equal("first scan", await File.ReadAllTextAsync(d.Cached("a.pdf")));

        Ps.Invoke("Get-CloudDrive -Name $name | Suspend-CloudDrive -Confirm:$false", d.Variables());
        Assert.Equal(true, DriveProperty(d, "Suspended"));
        Ps.Invoke("$name | Resume-CloudDrive -Confirm:$false", d.Variables());
        Assert.Equal(false, DriveProperty(d, "Suspended"));
        Assert.Empty(Ps.LastErrors);
    }
}
