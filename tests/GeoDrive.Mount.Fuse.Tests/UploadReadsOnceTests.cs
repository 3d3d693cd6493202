using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Issue 13's "large uploads read the file once": a file written through a real mount from empty goes up in parts
/// without a hashing pass before them (docs/decisions/0032-hashed-as-written.md). What the upload read is this process's
/// own count of bytes read (rchar in /proc/self/io) across the upload alone, so the test runs alone, after the others.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
[Trait("Category", "Rate")]
[Collection(RateCollection.Name)]
public sealed class UploadReadsOnceTests(S3ServerFixture s3, ITestOutputHelper output) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int Size = 24 << 20;

    private (DriveRig Rig, FuseMountedDrive Mounted) MountDrive()
    {
        // Files above 8 MiB go in parts; nothing goes up before the test says so (an hour's settle, a manual clock).
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: read-once-tests }
            spec:
              upload: { settle: 1h }
              transfer: { multipart: { threshold: 8MiB, partSize: 8MiB } }
              excludes: [ "**/*.part" ]
            """, multipartThreshold: 8L << 20));
        return (rig, Mount(rig.Engine));
    }

    /// <summary>Uploads the file now; returns the bytes this process read meanwhile.</summary>
    private async Task<long> UploadAndCountReadsAsync(DriveRig rig, FuseMountedDrive mounted, string path)
    {
        await mounted.WaitForClosesAsync();
        var before = BytesRead();
        var entry = await rig.Engine.UploadAsync(path);
        var read = BytesRead() - before;
        output.WriteLine($"{path}: {Size:N0} bytes uploaded in parts, {read:N0} bytes read meanwhile ({(double)read / Size:0.00}×)");
        Assert.Equal(FileState.Cached, entry.State);
        return read;
    }

    private static long BytesRead() =>
        long.Parse(File.ReadLines("/proc/self/io").Single(l => l.StartsWith("rchar:", StringComparison.Ordinal))["rchar:".Length..]);

    [Fact]
    public async Task A_file_written_through_the_mount_from_start_to_end_is_read_once_by_its_multipart_upload()
    {
        var (rig, mounted) = MountDrive();
        var content = DriveRig.RandomBytes(Size, 13);
        await File.WriteAllBytesAsync(Path.Combine(mounted.Root, "film.mkv"), content);

        var read = await UploadAndCountReadsAsync(rig, mounted, "film.mkv");

        Assert.InRange(read, Size, Size * 3L / 2);
        Assert.Equal(content, await rig.ObjectBytesAsync("film.mkv"));
    }

    [Fact]
    public async Task A_file_written_under_a_name_kept_local_given_its_time_and_mode_and_renamed_is_read_once_by_its_multipart_upload()
    {
        var (rig, mounted) = MountDrive();
        var content = DriveRig.RandomBytes(Size, 14);
        var aside = Path.Combine(mounted.Root, "film.mkv.part");
        await File.WriteAllBytesAsync(aside, content);
        await mounted.WaitForClosesAsync();
        Assert.Equal(FileState.Excluded, rig.StateOf("film.mkv.part"));
        // As rsync and cp -p do after the last write.
        File.SetLastWriteTimeUtc(aside, new DateTime(2024, 5, 1, 8, 0, 0, DateTimeKind.Utc));
        File.SetUnixFileMode(aside, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);

        File.Move(Path.Combine(mounted.Root, "film.mkv.part"), Path.Combine(mounted.Root, "film.mkv"));
        var read = await UploadAndCountReadsAsync(rig, mounted, "film.mkv");

        Assert.InRange(read, Size, Size * 3L / 2);
        Assert.Equal(content, await rig.ObjectBytesAsync("film.mkv"));
    }

    [Fact]
    public async Task A_file_written_out_of_order_is_hashed_by_reading_it_and_its_object_records_its_bytes_checksum()
    {
        var (rig, mounted) = MountDrive();
        var content = DriveRig.RandomBytes(Size, 15);
        using (var handle = File.OpenHandle(Path.Combine(mounted.Root, "scan.tif"), FileMode.CreateNew, FileAccess.Write))
        {
            // The second half first, as a download with several connections writes.
            RandomAccess.Write(handle, content.AsSpan(Size / 2), Size / 2);
            RandomAccess.Write(handle, content.AsSpan(0, Size / 2), 0);
        }

        var read = await UploadAndCountReadsAsync(rig, mounted, "scan.tif");

        // The measure tells the two apart: a hashing pass, then the parts.
        Assert.True(read >= 2L * Size, $"{read:N0} bytes read");
        Assert.Equal(content, await rig.ObjectBytesAsync("scan.tif"));
        var head = await rig.Store.HeadAsync("scan.tif");
        Assert.True(GeoDrive.Engine.Layout.ObjectLayout.Holds(head!, Size, Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(content)), null));
    }
}
