using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>New-CloudDrive -Endpoint with several URLs of one store: round-robin, a dead one taken out.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class EndpointTests(S3ServerFixture s3) : ServiceTests
{
    [Fact]
    public async Task A_drive_whose_second_endpoint_stopped_still_uploads_stubs_and_recalls()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        // Creation checks every endpoint (a mistyped URL is refused then), so the second one is a
        // proxy to the same server, stopped once the drive exists: its port is closed from then on.
        using var proxy = new FaultProxy(s3.Endpoint);
        var closed = proxy.Endpoint;
        var variables = d.Variables();
        variables["endpoints"] = new[] { closed, s3.Endpoint };

        var created = Ps.Invoke(DriveScenario.NewDriveScript.Replace("-Endpoint $endpoint", "-Endpoint $endpoints", StringComparison.Ordinal), variables);

        Assert.True(Ps.LastErrors.Count == 0, string.Join("; ", Ps.LastErrors.Select(e => e.FullyQualifiedErrorId + ": " + e.Exception.Message)));
        var drive = created.Single();
        proxy.Stop();
        Assert.Equal([closed, s3.Endpoint], (string[])drive.Properties["Endpoints"].Value);
        var files = Enumerable.Range(0, 6).ToDictionary(i => $"f{i}.bin", i => DriveRig.RandomBytes(20_000 + i, i));
        foreach (var (path, bytes) in files)
        {
            await File.WriteAllBytesAsync(d.Mounted(path), bytes);
        }
        await DriveScenario.EventuallyAsync(
            () => (int)Ps.Invoke("@(Get-CloudFile -Drive $name | Where-Object State -eq 'Cached').Count", variables).Single().BaseObject == files.Count,
            "every file Cached through the live endpoint");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path '*.bin' -Force", variables);
        Assert.Empty(Ps.LastErrors);

        foreach (var (path, bytes) in files)
        {
            Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached(path)));
            Assert.Equal(bytes, await File.ReadAllBytesAsync(d.Mounted(path)));
            Assert.Equal(bytes, await d.ObjectBytesAsync(path));
        }

        // Kept across a restart, and shown by Get-CloudDrive.
        await RestartServiceAsync();
        Assert.Equal([closed, s3.Endpoint], (string[])Ps.Invoke("(Get-CloudDrive -Name $name).Endpoints", variables).Select(o => (string)o.BaseObject).ToArray());
    }
}
