using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Issue 2's scenario: an administrator's PowerShell session, the service, a mount, a bucket.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class LifeCycleTests(S3ServerFixture s3) : IAsyncLifetime
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

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(10 * 1000 * 1000)]
    public async Task A_file_written_through_the_mount_is_uploaded_stubbed_and_recalled_with_the_same_bytes(int size)
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "2s"));
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(_ps.LastErrors);

        var content = new byte[size];
        new Random(size).NextBytes(content);
        await File.WriteAllBytesAsync(d.Mounted("report.bin"), content);
        Assert.Equal("Dirty", StateOf(d, "report.bin"));

        await DriveScenario.EventuallyAsync(() => StateOf(d, "report.bin") == "Cached", "report.bin Cached");
        Assert.Equal(content, await d.ObjectBytesAsync("report.bin"));

        _ps.Invoke("Invoke-ForceStub -Drive $name -Path report.bin -Confirm:$false", d.Variables());
        Assert.Empty(_ps.LastErrors);
        Assert.Equal("Stubbed", StateOf(d, "report.bin"));
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("report.bin")));
        Assert.Equal(size, new FileInfo(d.Mounted("report.bin")).Length);

        Assert.Equal(content, await File.ReadAllBytesAsync(d.Mounted("report.bin")));
        Assert.Equal("Cached", StateOf(d, "report.bin"));
    }

    [Fact]
    public async Task A_file_matching_an_exclude_never_reaches_the_bucket()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        await File.WriteAllTextAsync(d.Mounted("build.tmp"), "scratch");
        await File.WriteAllTextAsync(d.Mounted("keep.txt"), "keep");

        await DriveScenario.EventuallyAsync(() => StateOf(d, "keep.txt") == "Cached", "keep.txt Cached");
        _ps.Invoke("Invoke-ForceUpload -Drive $name -Path build.tmp -Confirm:$false", d.Variables());

        Assert.Equal("Excluded", StateOf(d, "build.tmp"));
        Assert.Null(await d.Bucket_.HeadAsync("build.tmp"));
        Assert.Equal("scratch", await File.ReadAllTextAsync(d.Mounted("build.tmp")));
    }

    [Fact]
    public async Task The_state_is_visible_as_an_extended_attribute_through_the_mount()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        await File.WriteAllTextAsync(d.Mounted("x.txt"), "x");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "x.txt") == "Cached", "x.txt Cached");
        _ps.Invoke("Invoke-ForceStub -Drive $name -Path x.txt -Confirm:$false", d.Variables());

        using var getfattr = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("getfattr", ["--only-values", "-n", "user.geodrive.state", d.Mounted("x.txt")]) { RedirectStandardOutput = true })!;
        var value = await getfattr.StandardOutput.ReadToEndAsync();
        await getfattr.WaitForExitAsync();

        Assert.Equal("Stubbed", value.Trim());
    }
}
