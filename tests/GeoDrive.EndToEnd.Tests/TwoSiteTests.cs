using System.Diagnostics;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Two sites on one bucket: two real services, one drive each over the same bucket, each with its own
/// cache, index and FUSE mount. What one site does, the other sees through its own mount.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class TwoSiteTests(S3ServerFixture s3) : IAsyncLifetime
{
    private static readonly TimeSpan UpdateWait = TimeSpan.FromSeconds(1);
    private readonly ServiceProcess _east = new();
    private readonly ServiceProcess _west = new();

    private static string Policy => """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: two-sites }
        spec:
          stubbing: { enabled: true, accessWait: 30d }
          upload: { settle: 0s, updateWait: 1s }
        """;

    public async Task InitializeAsync()
    {
        await _east.StartAsync();
        await _west.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _east.DisposeAsync();
        await _west.DisposeAsync();
    }


    private static async Task WaitCachedAsync(ServiceProcess service, DriveScenario site, string path)
    {
        using var client = new GeoDriveClient(service.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(
            () => client.GetFilesAsync(site.Name, path).GetAwaiter().GetResult() is [{ State: "Cached" }],
            $"{path} verified in the bucket", seconds: 30);
    }

    /// <summary>Lists the folder through the mount (a readdir, which syncs with the bucket once updateWait has passed).</summary>
    private static string[] List(DriveScenario site, string folder) =>
        Directory.Exists(site.Mounted(folder)) ? [.. Directory.GetFiles(site.Mounted(folder)).Select(Path.GetFileName).Order()!] : [];

    [Fact]
    public async Task A_file_written_on_one_site_reads_back_on_the_other_within_updateWait_and_its_delete_is_followed()
    {
        using var east = new DriveScenario(s3, Policy);
        using var west = new DriveScenario(s3, Policy);
        east.CreateOn(_east, east.Bucket);
        west.CreateOn(_west, east.Bucket);
        Directory.CreateDirectory(east.Mounted("docs"));
        Directory.CreateDirectory(west.Mounted("docs"));
        Assert.Empty(List(west, "docs"));
        var bytes = DriveRig.RandomBytes(300_000, 7);

        await File.WriteAllBytesAsync(east.Mounted("docs/plan.bin"), bytes);
        await WaitCachedAsync(_east, east, "docs/plan.bin");
        var seen = Stopwatch.StartNew();
        await DriveScenario.EventuallyAsync(() => List(west, "docs").Contains("plan.bin"), "plan.bin listed on the other site", seconds: 10);
        var visibleAfter = seen.Elapsed;
        Assert.Equal(bytes, await File.ReadAllBytesAsync(west.Mounted("docs/plan.bin")));
        Assert.True(visibleAfter < UpdateWait + TimeSpan.FromSeconds(1), $"visible on the other site after {visibleAfter.TotalSeconds:0.0} s");

        // The other site holds a Cached copy now; the first site deletes the file.
        File.Delete(east.Mounted("docs/plan.bin"));
        await DriveScenario.EventuallyAsync(() => east.Bucket_.HeadAsync("docs/plan.bin").GetAwaiter().GetResult() is null, "the object deleted", seconds: 10);
        await DriveScenario.EventuallyAsync(() => !List(west, "docs").Contains("plan.bin"), "the delete followed on the other site", seconds: 10);
        Assert.False(File.Exists(west.Cached("docs/plan.bin")));

        // Followed, not undone: nothing goes back up from the other site.
        using var client = new GeoDriveClient(_west.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(() => client.GetDriveStatusAsync(west.Name).GetAwaiter().GetResult() is { UploadQueue: 0, Uploading: 0 }, "the other site idle", seconds: 10);
        Assert.Null(await east.ObjectBytesAsync("docs/plan.bin"));
    }

    [Fact]
    public async Task A_file_replaced_on_another_site_is_never_read_as_its_new_bytes_cut_at_the_old_size()
    {
        using var east = new DriveScenario(s3, Policy);
        using var west = new DriveScenario(s3, Policy);
        east.CreateOn(_east, east.Bucket);
        west.CreateOn(_west, east.Bucket);
        var first = DriveRig.RandomBytes(10_000, 9);
        var second = DriveRig.RandomBytes(30_000, 10);
        await File.WriteAllBytesAsync(east.Mounted("table.csv"), first);
        await WaitCachedAsync(_east, east, "table.csv");
        await DriveScenario.EventuallyAsync(() => List(west, "").Contains("table.csv"), "table.csv listed on the other site", seconds: 10);
        Assert.Equal(first, await File.ReadAllBytesAsync(west.Mounted("table.csv")));

        await File.WriteAllBytesAsync(east.Mounted("table.csv"), second);
        await WaitCachedAsync(_east, east, "table.csv");
        await Task.Delay(UpdateWait); // the other site asks the bucket again only after updateWait: that is the behaviour under test

        // The kernel holds the old size fresh (a stat just now) when the open finds the new version.
        Assert.Equal(first.Length, new FileInfo(west.Mounted("table.csv")).Length);
        var read = await File.ReadAllBytesAsync(west.Mounted("table.csv"));

        Assert.True(read.AsSpan().SequenceEqual(second), $"read {read.Length} bytes of the new version's {second.Length}");
    }

    [Fact]
    public async Task A_file_written_on_both_sites_keeps_both_versions_the_later_writer_gets_a_conflict_copy()
    {
        using var east = new DriveScenario(s3, Policy);
        using var west = new DriveScenario(s3, Policy);
        east.CreateOn(_east, east.Bucket);
        west.CreateOn(_west, east.Bucket);
        var original = DriveRig.RandomBytes(20_000, 11);
        var eastVersion = DriveRig.RandomBytes(21_000, 12);
        var westVersion = DriveRig.RandomBytes(22_000, 13);
        await File.WriteAllBytesAsync(east.Mounted("budget.xlsx"), original);
        await WaitCachedAsync(_east, east, "budget.xlsx");
        await DriveScenario.EventuallyAsync(() => List(west, "").Contains("budget.xlsx"), "budget.xlsx listed on the other site", seconds: 10);
        Assert.Equal(original, await File.ReadAllBytesAsync(west.Mounted("budget.xlsx")));

        // Both sites have the file open and save it; the east's save reaches the bucket first. The west opened it
        // before that, so its save is not based on the east's version (a west open after it would follow that version
        // first, once updateWait has passed, and its save would rightly replace it).
        await using (var westOpen = new FileStream(west.Mounted("budget.xlsx"), FileMode.Open, FileAccess.ReadWrite))
        {
            await File.WriteAllBytesAsync(east.Mounted("budget.xlsx"), eastVersion);
            await WaitCachedAsync(_east, east, "budget.xlsx");
            westOpen.SetLength(0);
            await westOpen.WriteAsync(westVersion);
        }

        using var client = new GeoDriveClient(_west.SocketPath, TimeSpan.FromSeconds(30));
        string? conflict = null;
        await DriveScenario.EventuallyAsync(() =>
        {
            conflict = client.GetFilesAsync(west.Name, "budget (conflict *).xlsx").GetAwaiter().GetResult() is [{ State: "Cached" } copy] ? copy.Path : null;
            return conflict is not null;
        }, "the west's bytes kept under a conflict name and uploaded", seconds: 30);

        Assert.Equal(eastVersion, await east.ObjectBytesAsync("budget.xlsx"));
        Assert.Equal(westVersion, await east.ObjectBytesAsync(conflict!));
        Assert.Equal(eastVersion, await File.ReadAllBytesAsync(west.Mounted("budget.xlsx")));
        Assert.Equal(westVersion, await File.ReadAllBytesAsync(west.Mounted(conflict!)));
        var events = await client.GetEventsAsync(west.Name, new DriveEventQuery { Kinds = ["Conflict"] });
        Assert.Contains(events, e => e.Path == "budget.xlsx" && e.Message.Contains(conflict!, StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_stub_whose_object_another_site_deleted_is_removed_at_its_next_open_not_failed_with_EIO()
    {
        using var east = new DriveScenario(s3, Policy);
        using var west = new DriveScenario(s3, Policy);
        east.CreateOn(_east, east.Bucket);
        west.CreateOn(_west, east.Bucket);
        await File.WriteAllBytesAsync(east.Mounted("scan.tif"), DriveRig.RandomBytes(50_000, 8));
        await WaitCachedAsync(_east, east, "scan.tif");
        await DriveScenario.EventuallyAsync(() => List(west, "").Contains("scan.tif"), "scan.tif listed on the other site as a stub", seconds: 10);

        File.Delete(east.Mounted("scan.tif"));
        await DriveScenario.EventuallyAsync(() => east.Bucket_.HeadAsync("scan.tif").GetAwaiter().GetResult() is null, "the object deleted", seconds: 10);
        await Task.Delay(UpdateWait); // the other site asks the bucket again only after updateWait: that is the behaviour under test

        Assert.Throws<FileNotFoundException>(() => File.ReadAllBytes(west.Mounted("scan.tif")));
        Assert.False(File.Exists(west.Cached("scan.tif")));
    }
}
