using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A renamed clean file is copied in the bucket (server side), never uploaded again: its object appears under
/// the new key with the file's own metadata, the old key goes, a stub stays a stub, and nothing is lost on the way.
/// </summary>
public sealed class ServerSideRenameTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: rename-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    private static async Task SettleAsync(DriveRig rig)
    {
        for (var i = 0; i < 3; i++)
        {
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();
        }
    }

    private static void Rename(DriveRig rig, string from, string to)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(rig.Local(to))!);
        if (Directory.Exists(rig.Local(from)))
        {
            Directory.Move(rig.Local(from), rig.Local(to));
            rig.Engine.Renamed(from, to, rig.Caller, isDirectory: true);
        }
        else
        {
            File.Move(rig.Local(from), rig.Local(to));
            rig.Engine.Renamed(from, to, rig.Caller, isDirectory: false);
        }
    }

    private static int Uploads(DriveRig rig) => rig.Engine.ReadEvents(kind: DriveEventKind.Upload).Count;

    [Fact]
    public async Task A_renamed_Cached_file_is_copied_in_the_bucket_stays_Cached_and_its_old_object_goes()
    {
        await using var rig = new DriveRig(s3, Policy);
        var bytes = DriveRig.RandomBytes(50_000, 1);
        await rig.WriteAsync("draft.docx", bytes);
        await SettleAsync(rig);
        var uploads = Uploads(rig);

        Rename(rig, "draft.docx", "final.docx");
        Assert.Equal(FileState.Cached, rig.StateOf("final.docx"));
        await SettleAsync(rig);

        Assert.Equal(FileState.Cached, rig.StateOf("final.docx"));
        Assert.Equal(uploads, Uploads(rig));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("final.docx"));
        Assert.Null(await rig.ObjectBytesAsync("draft.docx"));
        Assert.Equal("final.docx", rig.Engine.GetFile("final.docx")!.ObjectKey);
        Assert.Equal(rig.Engine.GetFile("final.docx")!.Checksum, (await rig.Store.HeadAsync("final.docx"))!.Metadata[ObjectLayout.Sha256Key]);
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }

    [Fact]
    public async Task A_renamed_stub_is_copied_in_the_bucket_stays_a_stub_and_recalls_its_bytes_from_the_new_key()
    {
        await using var rig = new DriveRig(s3, Policy);
        var bytes = DriveRig.RandomBytes(80_000, 2);
        await rig.WriteAsync("scans/a.tif", bytes);
        await SettleAsync(rig);
        await rig.Engine.StubAsync("scans/a.tif");
        var uploads = Uploads(rig);

        Rename(rig, "scans", "archive/scans");
        await SettleAsync(rig);

        Assert.Equal(FileState.Stubbed, rig.StateOf("archive/scans/a.tif"));
        Assert.Null(await rig.ObjectBytesAsync("scans/a.tif"));
        Assert.Equal(bytes, await rig.ReadAsync("archive/scans/a.tif"));
        Assert.Equal(FileState.Cached, rig.StateOf("archive/scans/a.tif"));
        Assert.Equal(uploads, Uploads(rig));
    }

    [Fact]
    public async Task A_folder_rename_interrupted_by_a_restart_finishes_its_copies_and_loses_no_file()
    {
        const int files = 600;
        await using var rig = new DriveRig(s3, Policy);
        var contents = Enumerable.Range(0, files).ToDictionary(i => $"f{i:D4}.bin", i => DriveRig.RandomBytes(1000 + i, i));
        foreach (var (name, bytes) in contents)
        {
            await rig.WriteAsync("old/" + name, bytes);
        }
        await SettleAsync(rig);
        for (var i = 0; i < files; i += 2)
        {
            await rig.Engine.StubAsync($"old/f{i:D4}.bin");
        }

        Rename(rig, "old", "new");
        // One tick settles a batch (512) of the 600 copies; the restart comes in the middle.
        await rig.Engine.TickAsync();
        await rig.RestartAsync();
        await SettleAsync(rig);

        foreach (var (name, bytes) in contents)
        {
            Assert.Equal(bytes, await rig.ObjectBytesAsync("new/" + name));
            Assert.Null(await rig.Store.HeadAsync("old/" + name));
            Assert.Equal(bytes, await rig.ReadAsync("new/" + name));
        }
        Assert.Equal(0, rig.Engine.OwedBucketChangeCount);
    }
}
