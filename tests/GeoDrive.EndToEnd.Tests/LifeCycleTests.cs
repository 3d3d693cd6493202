using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Issue 2's scenario: an administrator's PowerShell session, the service, a mount, a bucket.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class LifeCycleTests(S3ServerFixture s3) : ServiceTests
{

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(10 * 1000 * 1000)]
    public async Task A_file_written_through_the_mount_is_uploaded_stubbed_and_recalled_with_the_same_bytes(int size)
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "2s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);

        var content = new byte[size];
        new Random(size).NextBytes(content);
        await File.WriteAllBytesAsync(d.Mounted("report.bin"), content);
        Assert.Equal("Dirty", StateOf(d, "report.bin"));

        await DriveScenario.EventuallyAsync(() => StateOf(d, "report.bin") == "Cached", "report.bin Cached");
        Assert.Equal(content, await d.ObjectBytesAsync("report.bin"));

        Ps.Invoke("Invoke-ForceStub -Drive $name -Path report.bin -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal("Stubbed", StateOf(d, "report.bin"));
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("report.bin")));
        Assert.Equal(size, new FileInfo(d.Mounted("report.bin")).Length);

        Assert.Equal(content, await File.ReadAllBytesAsync(d.Mounted("report.bin")));
        Assert.Equal("Cached", StateOf(d, "report.bin"));
    }

    [Fact]
    public async Task A_file_left_alone_for_its_access_wait_is_stubbed_by_the_policy_and_reads_back_the_same()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s", accessWait: "2s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var content = DriveRig.RandomBytes(300_000, 42);

        var writeStarted = DateTimeOffset.Now;
        await File.WriteAllBytesAsync(d.Mounted("idle.bin"), content);

        // No Invoke-ForceStub: the service uploads, verifies and stubs on its own.
        // The index says Stubbed before the data is freed (so a crash in between re-stubs); the Stub event is recorded once
        // it is, so that is what is awaited.
        List<(string Kind, long Id, DateTimeOffset Time)> events = [];
        await DriveScenario.EventuallyAsync(() =>
        {
            events = Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Upload, Stub -Path idle.bin", d.Variables())
                .Select(e => (Kind: (string)e.Properties["Kind"].Value, Id: (long)e.Properties["Id"].Value, Time: (DateTimeOffset)e.Properties["Time"].Value))
                .OrderBy(e => e.Id).ToList();
            return events.Any(e => e.Kind == "Stub");
        }, "idle.bin's Stub event, after its access wait", seconds: 30);
        Assert.Equal("Stubbed", StateOf(d, "idle.bin"));
        Assert.Equal(["Upload", "Stub"], events.Select(e => e.Kind));
        // The service's own time of the stub, not when this test noticed it: the access wait was waited.
        var stubbedAfter = events[1].Time - writeStarted;
        Assert.True(stubbedAfter >= TimeSpan.FromSeconds(2), $"stubbed {stubbedAfter.TotalSeconds:0.00} s after the write began, before its access wait of 2 s");

        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("idle.bin")));
        Assert.Equal(content.Length, new FileInfo(d.Mounted("idle.bin")).Length);
        Assert.Equal(content, await File.ReadAllBytesAsync(d.Mounted("idle.bin")));
    }

    [Fact]
    public async Task A_file_matching_an_exclude_never_reaches_the_bucket()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        await File.WriteAllTextAsync(d.Mounted("build.tmp"), "scratch");
        await File.WriteAllTextAsync(d.Mounted("keep.txt"), "keep");

        await DriveScenario.EventuallyAsync(() => StateOf(d, "keep.txt") == "Cached", "keep.txt Cached");
        Ps.Invoke("Invoke-ForceUpload -Drive $name -Path build.tmp -Confirm:$false", d.Variables());

        Assert.Equal("Excluded", StateOf(d, "build.tmp"));
        Assert.Null(await d.Bucket_.HeadAsync("build.tmp"));
        Assert.Equal("scratch", await File.ReadAllTextAsync(d.Mounted("build.tmp")));
    }

    [Fact]
    public async Task The_state_is_visible_as_an_extended_attribute_through_the_mount()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        await File.WriteAllTextAsync(d.Mounted("x.txt"), "x");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "x.txt") == "Cached", "x.txt Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path x.txt -Confirm:$false", d.Variables());

        using var getfattr = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("getfattr", ["--only-values", "-n", "user.geodrive.state", d.Mounted("x.txt")]) { RedirectStandardOutput = true })!;
        var value = await getfattr.StandardOutput.ReadToEndAsync();
        await getfattr.WaitForExitAsync();

        Assert.Equal("Stubbed", value.Trim());
    }
}
