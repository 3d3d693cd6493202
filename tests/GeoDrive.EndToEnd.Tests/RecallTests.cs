using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Invoke-CloudRecall: pre-warming stubs from PowerShell through the service.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class RecallTests(S3ServerFixture s3) : ServiceTests
{
    [Fact]
    public async Task Invoke_CloudRecall_brings_back_the_stubs_under_a_folder_and_reports_files_bytes_and_time()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Directory.CreateDirectory(d.Mounted("Active/sub"));
        Directory.CreateDirectory(d.Mounted("Other"));
        var contents = new Dictionary<string, byte[]>
        {
            ["Active/a.bin"] = DriveRig.RandomBytes(100_000, 1),
            ["Active/b.bin"] = DriveRig.RandomBytes(2_000_000, 2),
            ["Active/sub/c.bin"] = DriveRig.RandomBytes(30_000, 3),
            ["Other/d.bin"] = DriveRig.RandomBytes(40_000, 4),
        };
        foreach (var (path, bytes) in contents)
        {
            await File.WriteAllBytesAsync(d.Mounted(path), bytes);
        }
        await DriveScenario.EventuallyAsync(
            () => (int)Ps.Invoke("@(Get-CloudFile -Drive $name -Path '**' | Where-Object State -eq 'Cached').Count", d.Variables()).Single().BaseObject == 4,
            "all four Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path '**' -Confirm:$false", d.Variables());
        Assert.All(contents.Keys, p => Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached(p))));

        var result = Ps.Invoke("Invoke-CloudRecall -Drive $name -Path Active -Recurse -ThrottleLimit 2", d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(3, (int)result.Properties["Files"].Value);
        Assert.Equal(2_130_000L, (long)result.Properties["Bytes"].Value);
        Assert.Equal(0, (int)result.Properties["Failures"].Value);
        foreach (var path in new[] { "Active/a.bin", "Active/b.bin", "Active/sub/c.bin" })
        {
            // The cache file itself holds the bytes again: recalled by the service, not by a read through the mount.
            Assert.Equal(contents[path], await File.ReadAllBytesAsync(d.Cached(path)));
        }
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("Other/d.bin")));
        var status = Ps.Invoke("Get-CloudDriveStatus -Name $name", d.Variables()).Single();
        Assert.Equal((3L, 2_130_000L, 1L), ((long)status.Properties["RecalledFiles"].Value, (long)status.Properties["RecalledBytes"].Value, (long)status.Properties["Stubbed"].Value));
        Assert.Equal(4L, (long)status.Properties["UploadedFiles"].Value);
        Assert.Equal("Stubbed", StateOf(d, "Other/d.bin"));
    }

    [Fact]
    public async Task A_suspended_drive_keeps_its_changes_Dirty_across_a_restart_and_uploads_them_once_resumed()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        var suspended = Ps.Invoke("Suspend-CloudDrive -Name $name -PassThru -Confirm:$false", d.Variables()).Single();
        Assert.True((bool)suspended.Properties["Suspended"].Value);
        await File.WriteAllTextAsync(d.Mounted("held.txt"), "held back");

        await RestartServiceAsync();
        Assert.True((bool)Ps.Invoke("(Get-CloudDrive -Name $name).Suspended", d.Variables()).Single().BaseObject);
        Assert.Equal("Dirty", StateOf(d, "held.txt"));

        Ps.Invoke("Resume-CloudDrive -Name $name -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        await DriveScenario.EventuallyAsync(() => StateOf(d, "held.txt") == "Cached", "held.txt Cached after resume");
        Assert.Equal("held back"u8.ToArray(), await d.ObjectBytesAsync("held.txt"));
    }
}
