using GeoDrive.Api;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// File properties through the real FUSE mount (issue 14, item 2): what chown, chmod, touch, setfattr and setfacl set on a
/// file stays through Invoke-ForceStub and the recall of the next read, and a new host's drive over the same bucket shows
/// the same owner, mode, time to the nanosecond, attributes and ACL through its own mount, before and after its recall.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class FilePropertyTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _site = new();
    private readonly ServiceProcess _newHost = new();

    public async Task InitializeAsync()
    {
        await _site.StartAsync();
        await _newHost.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _site.DisposeAsync();
        await _newHost.DisposeAsync();
    }

    private static string Run(string file, params string[] args) => Command.Output(file, args);

    /// <summary>What a user sees of a file's properties through a mount, without its path: stat, getfattr and getfacl.</summary>
    private static string Properties(string mounted) => string.Join("\n",
        Run("stat", "-c", "%U:%G %a %y %s", mounted).Trim(),
        Run("getfattr", "--absolute-names", "-d", "-m", "^user\\.", mounted).Replace(mounted, "", StringComparison.Ordinal)
            .Split('\n').Where(l => !l.StartsWith("user.geodrive.state", StringComparison.Ordinal)).Aggregate("", (a, l) => a + l + "\n").Trim(),
        Run("getfacl", "--absolute-names", "--omit-header", mounted).Trim());


    [Fact]
    public async Task Owner_mode_nanosecond_time_attributes_and_ACL_set_through_the_mount_survive_a_stub_a_recall_and_a_new_host()
    {
        using var site = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        using var newHost = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        site.CreateOn(_site, site.Bucket);
        var bytes = DriveRig.RandomBytes(150_000, 21);
        Directory.CreateDirectory(site.Mounted("scans"));
        var file = site.Mounted("scans/invoice.pdf");
        await File.WriteAllBytesAsync(file, bytes);
        using var client = new GeoDriveClient(_site.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(() => client.GetFilesAsync(site.Name, "scans/invoice.pdf").GetAwaiter().GetResult() is [{ State: "Cached" }],
            "the file verified in the bucket", seconds: 30);

        // Changed after the upload, through the mount: the object's metadata must follow, with no upload of the bytes.
        Run("chown", "nobody:nogroup", file);
        Run("chmod", "640", file);
        Run("setfattr", "-n", "user.comment", "-v", "paid 2025-06-01", file);
        Run("setfacl", "-m", "u:root:rw-", file);
        Run("touch", "-m", "-d", "2025-06-01 12:00:00.123456789 +0000", file);
        var expected = Properties(file);
        Assert.Contains("nobody:nogroup", expected, StringComparison.Ordinal);
        Assert.Contains("12:00:00.123456789", expected, StringComparison.Ordinal);
        Assert.Contains("user.comment=\"paid 2025-06-01\"", expected, StringComparison.Ordinal);
        Assert.Contains("user:root:rw-", expected, StringComparison.Ordinal);
        await DriveScenario.EventuallyAsync(() => site.Bucket_.HeadAsync("scans/invoice.pdf").GetAwaiter().GetResult() is { } head
            && head.Metadata.GetValueOrDefault(PropertyMetadata.AclKey) is not null && head.Metadata.GetValueOrDefault(PropertyMetadata.MtimeNsKey) == "1748779200.123456789",
            "the changed properties in the object's metadata", seconds: 30);

        using (var ps = new PowerShellSession(_site.SocketPath))
        {
            ps.Invoke("Invoke-ForceStub -Drive $name -Path scans/invoice.pdf -Confirm:$false", site.Variables());
            Assert.True(ps.LastErrors.Count == 0, string.Join("\n", ps.LastErrors));
        }
        Assert.Equal(expected, Properties(file));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(file));
        Assert.Equal(expected, Properties(file));

        // A new host: its own service, cache and mount over the same bucket, the drive rebuilt from the bucket alone.
        newHost.CreateOn(_newHost, site.Bucket);
        using (var ps = new PowerShellSession(_newHost.SocketPath))
        {
            ps.Invoke("Sync-CloudDrive -Drive $name", newHost.Variables());
            Assert.True(ps.LastErrors.Count == 0, string.Join("\n", ps.LastErrors));
        }
        var there = newHost.Mounted("scans/invoice.pdf");
        Assert.Equal(expected, Properties(there));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(there));
        Assert.Equal(expected, Properties(there));
    }
}
