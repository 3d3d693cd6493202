using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A file's properties survive a stub, a recall and a new host (issue 14, item 2): owner and group, mode, the time to the
/// nanosecond, user.* attributes and the POSIX ACL, as stat, getfattr and getfacl show them, on a real cache volume and
/// bucket. The test process is root, as the service is.
/// </summary>
public sealed class FilePropertiesTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: property-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    /// <summary>Nine digits after the second: what a 100 ns tick cannot hold.</summary>
    private const string ExactTime = "2025-06-01 12:00:00.123456789 +0000";

    private static string Run(string file, params string[] args) => Command.Output(file, args);

    /// <summary>Owner, group, mode and time to the nanosecond, as stat shows them.</summary>
    private static string Stat(string local) => Run("stat", "-c", "%u:%g %a %y", local).Trim();

    /// <summary>The user.* attributes, values in hex, as getfattr shows them.</summary>
    private static string Attributes(string local) => string.Join('\n', Run("getfattr", "--absolute-names", "-d", "-e", "hex", "-m", "^user\\.", local)
        .Split('\n').Where(line => !line.StartsWith("user.geodrive.", StringComparison.Ordinal) && !line.StartsWith("# file:", StringComparison.Ordinal)));

    private static string Acl(string local) => Run("getfacl", "--absolute-names", "--omit-header", "--numeric", local);

    private static async Task WriteWithPropertiesAsync(DriveRig rig, string path, byte[] bytes)
    {
        var local = rig.Local(path);
        Directory.CreateDirectory(Path.GetDirectoryName(local)!);
        await File.WriteAllBytesAsync(local, bytes);
        Run("chown", "65534:65534", local);
        Run("chmod", "640", local);
        Run("setfattr", "-n", "user.comment", "-v", "approved by ✓ Ana", local);
        Run("setfattr", "-n", "user.raw", "-v", "0x0001ff7f", local);
        Run("setfacl", "-m", "u:65534:r--,g:0:rw-", local);
        Run("touch", "-m", "-d", ExactTime, local);
        rig.Engine.Created(path, rig.Caller, isDirectory: false);
        await rig.Engine.ClosedAsync(path, rig.Caller, modified: true);
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal(FileState.Cached, rig.StateOf(path));
    }

    [Fact]
    public async Task Owner_mode_exact_time_attributes_and_ACL_come_back_on_a_new_host_and_stay_through_its_recall()
    {
        await using var site = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(20_000, 7);
        await WriteWithPropertiesAsync(site, "scans/page-1.tif", bytes);
        var original = (Stat(site.Local("scans/page-1.tif")), Attributes(site.Local("scans/page-1.tif")), Acl(site.Local("scans/page-1.tif")));
        Assert.Contains(".123456789", original.Item1, StringComparison.Ordinal);
        Assert.StartsWith("65534:65534 ", original.Item1, StringComparison.Ordinal);
        Assert.Contains("user:65534:r--", original.Item3, StringComparison.Ordinal);

        // A new host: another cache and index on the same bucket, its drive rebuilt from the bucket alone.
        await using var newHost = new DriveRig(s3, SettleZero, bucket: site.Bucket);
        await newHost.Engine.SyncTreeAsync("");
        Assert.Equal(FileState.Stubbed, newHost.StateOf("scans/page-1.tif"));
        var local = newHost.Local("scans/page-1.tif");
        Assert.Equal(original, (Stat(local), Attributes(local), Acl(local)));
        // No data block: at most the one block of attributes that do not fit in the inode (20 KB of data would be 40).
        Assert.InRange(newHost.AllocatedBlocks("scans/page-1.tif"), 0, 8);

        Assert.Equal(bytes, await newHost.ReadAsync("scans/page-1.tif"));
        Assert.Equal(FileState.Cached, newHost.StateOf("scans/page-1.tif"));
        Assert.Equal(original, (Stat(local), Attributes(local), Acl(local)));
    }

    [Fact]
    public async Task Stub_and_recall_keep_the_time_to_the_nanosecond_and_every_other_property()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(9_000, 3);
        await WriteWithPropertiesAsync(rig, "a.bin", bytes);
        var local = rig.Local("a.bin");
        var before = (Stat(local), Attributes(local), Acl(local));

        await rig.Engine.StubAsync("a.bin");
        Assert.Equal(FileState.Stubbed, rig.StateOf("a.bin"));
        Assert.Equal(before, (Stat(local), Attributes(local), Acl(local)));

        Assert.Equal(bytes, await rig.ReadAsync("a.bin"));
        Assert.Equal(before, (Stat(local), Attributes(local), Acl(local)));
    }

    [Fact]
    public async Task The_object_records_the_properties_in_its_metadata_and_names_what_does_not_fit_in_S3s_2_KB()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        await WriteWithPropertiesAsync(rig, "small.txt", "x"u8.ToArray());
        var head = await rig.Store.HeadAsync("small.txt");
        Assert.NotNull(head);
        Assert.Equal("65534:65534", head.Metadata[PropertyMetadata.OwnerKey]);
        Assert.Equal("nobody:nogroup", head.Metadata[PropertyMetadata.OwnerNameKey]);
        Assert.Equal("1748779200.123456789", head.Metadata[PropertyMetadata.MtimeNsKey]);
        Assert.Equal("u::rw-,u:65534:r--,g::r--,g:0:rw-,m::rw-,o::---", head.Metadata[PropertyMetadata.AclKey]);
        Assert.Equal("comment=approved%20by%20%E2%9C%93%20Ana&raw=%00%01%FF%7F", head.Metadata[PropertyMetadata.XattrKey]);

        // Two attributes of 1,500 bytes each: one fits beside the rest, the other is named in an event and left out.
        var local = rig.Local("big.txt");
        await File.WriteAllTextAsync(local, "y");
        Run("setfattr", "-n", "user.a-first", "-v", new string('a', 1_500), local);
        Run("setfattr", "-n", "user.b-second", "-v", new string('b', 1_500), local);
        rig.Engine.Created("big.txt", rig.Caller, isDirectory: false);
        await rig.Engine.ClosedAsync("big.txt", rig.Caller, modified: true);
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal(FileState.Cached, rig.StateOf("big.txt"));
        var big = await rig.Store.HeadAsync("big.txt");
        Assert.StartsWith("a-first=aaa", big!.Metadata[PropertyMetadata.XattrKey], StringComparison.Ordinal);
        Assert.DoesNotContain("b-second", big.Metadata[PropertyMetadata.XattrKey], StringComparison.Ordinal);
        var trimmed = Assert.Single(rig.Engine.ReadEvents(), e => e.ErrorId == Core.Errors.ErrorIds.PropertiesTrimmed);
        Assert.Equal("big.txt", trimmed.Path);
        Assert.Contains("user.b-second", trimmed.Message, StringComparison.Ordinal);
        Assert.True(big.Metadata.Sum(m => m.Key.Length + m.Value.Length) <= PropertyMetadata.Limit);
    }

    [Fact]
    public async Task Properties_changed_on_a_clean_file_reach_its_object_without_an_upload_and_a_touched_stub_stays_a_stub_after_a_restart()
    {
        await using var rig = new DriveRig(s3, SettleZero);
        var bytes = DriveRig.RandomBytes(5_000, 11);
        await rig.WriteAsync("plan.pdf", bytes);
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        var uploads = rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count;
        var local = rig.Local("plan.pdf");

        // As chmod, setfattr and touch through the mount do: the cache file changes, the engine is told.
        Run("chmod", "600", local);
        Run("setfattr", "-n", "user.reviewed", "-v", "yes", local);
        Run("touch", "-m", "-d", ExactTime, local);
        rig.Engine.PropertiesChanged("plan.pdf", rig.Caller);
        await rig.Engine.TickAsync();

        var head = await rig.Store.HeadAsync("plan.pdf");
        Assert.Equal("600", head!.Metadata[ObjectLayout.ModeKey]);
        Assert.Equal("reviewed=yes", head.Metadata[PropertyMetadata.XattrKey]);
        Assert.Equal("1748779200.123456789", head.Metadata[PropertyMetadata.MtimeNsKey]);
        Assert.Equal(FileState.Cached, rig.StateOf("plan.pdf"));
        Assert.Equal(uploads, rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count); // a copy in the bucket, no bytes sent again
        Assert.Equal(bytes, await rig.ObjectBytesAsync("plan.pdf"));

        // A stub touched (a restore of times, rsync -t): still a stub of the same bytes after a restart, no conflict copy.
        await rig.Engine.StubAsync("plan.pdf");
        Run("touch", "-m", "-d", "2024-01-02 03:04:05.987654321 +0000", local);
        rig.Engine.PropertiesChanged("plan.pdf", rig.Caller);
        await rig.Engine.TickAsync();
        Assert.Equal("1704164645.987654321", (await rig.Store.HeadAsync("plan.pdf"))!.Metadata[PropertyMetadata.MtimeNsKey]);
        await rig.RestartAsync();
        Assert.Equal(FileState.Stubbed, rig.StateOf("plan.pdf"));
        Assert.Equal(["plan.pdf"], Directory.GetFiles(rig.CachePath).Select(Path.GetFileName));
        Assert.DoesNotContain(rig.Engine.ReadEvents(), e => e.Kind == DriveEventKind.Conflict);
        Assert.Equal(bytes, await rig.ReadAsync("plan.pdf"));
        Assert.Contains("2024-01-02 03:04:05.987654321", Stat(local), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Properties_changed_at_another_site_are_taken_by_a_cached_file_and_by_a_stub_without_their_bytes_moving()
    {
        await using var east = new DriveRig(s3, SettleZero);
        await using var west = new DriveRig(s3, SettleZero, bucket: east.Bucket);
        var report = DriveRig.RandomBytes(8_000, 12);
        var scan = DriveRig.RandomBytes(9_000, 13);
        await east.WriteAsync("report.pdf", report);
        await east.WriteAsync("scan.tif", scan);
        await east.Engine.TickAsync();
        await east.Engine.WhenUploadsIdleAsync();
        await west.Engine.SyncTreeAsync("");
        Assert.Equal(report, await west.ReadAsync("report.pdf"));
        Assert.Equal(FileState.Stubbed, west.StateOf("scan.tif"));
        var recalls = west.Engine.ReadEvents(kind: DriveEventKind.Recall).Count;

        foreach (var path in new[] { "report.pdf", "scan.tif" })
        {
            Run("chmod", "600", east.Local(path));
            Run("setfattr", "-n", "user.reviewed", "-v", "yes", east.Local(path));
            Run("touch", "-m", "-d", ExactTime, east.Local(path));
            east.Engine.PropertiesChanged(path, east.Caller);
        }
        await east.Engine.TickAsync();
        await west.Engine.FollowPeerChangesAsync(["report.pdf", "scan.tif"]);

        foreach (var path in new[] { "report.pdf", "scan.tif" })
        {
            Assert.Equal(Stat(east.Local(path)).Split(' ', 2)[1], Stat(west.Local(path)).Split(' ', 2)[1]);
            Assert.Contains("user.reviewed=0x796573", Attributes(west.Local(path)), StringComparison.Ordinal);
        }
        Assert.Equal(FileState.Cached, west.StateOf("report.pdf"));
        Assert.Equal(FileState.Stubbed, west.StateOf("scan.tif"));
        Assert.All(await File.ReadAllBytesAsync(west.Local("scan.tif")), b => Assert.Equal(0, b)); // still a stub's zeros: no bytes came
        Assert.Equal(recalls, west.Engine.ReadEvents(kind: DriveEventKind.Recall).Count);
        await west.RestartAsync();
        Assert.Equal(FileState.Stubbed, west.StateOf("scan.tif"));
        Assert.Equal(FileState.Cached, west.StateOf("report.pdf"));
        Assert.DoesNotContain(west.Engine.ReadEvents(), e => e.Kind == DriveEventKind.Conflict);
        Assert.Equal(scan, await west.ReadAsync("scan.tif"));

        // A change of the west's own, not yet in the bucket, is not taken back by the east's version it still shows.
        Run("chmod", "640", west.Local("report.pdf"));
        west.Engine.PropertiesChanged("report.pdf", west.Caller);
        await west.Engine.FollowPeerChangesAsync(["report.pdf"]);
        Assert.Contains(" 640 ", Stat(west.Local("report.pdf")), StringComparison.Ordinal);
        await west.Engine.TickAsync();
        Assert.Equal("640", (await west.Store.HeadAsync("report.pdf"))!.Metadata[ObjectLayout.ModeKey]);
        Assert.Equal(report, await west.ObjectBytesAsync("report.pdf"));
    }
}
