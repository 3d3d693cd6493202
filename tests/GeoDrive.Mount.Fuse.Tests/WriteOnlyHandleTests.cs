using System.IO.MemoryMappedFiles;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// A handle opened for writing only (docs/decisions/0037-write-only-handles-uncached.md) has its writes sent to the
/// service as they come, without a copy in the mount's page cache: the bytes are kept once, in the cache file. Handles
/// that may read keep the page cache, and see a write-only handle's bytes at once.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class WriteOnlyHandleTests(S3ServerFixture s3, ITestOutputHelper output) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int Size = 1 << 20;

    private (DriveRig Rig, FuseMountedDrive Mounted) MountedRig()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: write-only-tests }
            spec:
              upload: { settle: 1h }
            """));
        return (rig, Mount(rig.Engine));
    }

    [Fact]
    public async Task A_new_files_bytes_written_through_a_write_only_handle_are_kept_once_in_the_cache_file_and_not_again_in_the_mounts_page_cache()
    {
        var (rig, mounted) = MountedRig();
        var content = DriveRig.RandomBytes(Size, 37);
        long cachedByTheMount;
        using (var writer = new FileStream(Path.Combine(mounted.Root, "render.exr"), FileMode.CreateNew, FileAccess.Write, FileShare.None, bufferSize: 0))
        {
            writer.Write(content);
            cachedByTheMount = PageCache.PagesCached(writer.SafeFileHandle);
        }
        await mounted.WaitForClosesAsync();
        output.WriteLine($"pages of the file in the mount's page cache after the write: {cachedByTheMount}");

        Assert.Equal(0, cachedByTheMount);
        Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local("render.exr")));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("render.exr")).State);
        Assert.Equal(content, await rig.ObjectBytesAsync("render.exr"));
    }

    [Fact]
    public async Task An_existing_file_opened_write_only_and_appended_to_keeps_its_bytes_out_of_the_mounts_page_cache_and_appends_at_its_end()
    {
        var (rig, mounted) = MountedRig();
        var path = Path.Combine(mounted.Root, "audit.log");
        var first = DriveRig.RandomBytes(Size / 2, 5);
        var second = DriveRig.RandomBytes(Size / 2, 6);
        await File.WriteAllBytesAsync(path, first);
        long cachedByTheMount;
        using (var appender = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0))
        {
            appender.Write(second);
            cachedByTheMount = PageCache.PagesCached(appender.SafeFileHandle);
        }
        await mounted.WaitForClosesAsync();
        byte[] whole = [.. first, .. second];

        Assert.Equal(0, cachedByTheMount);
        Assert.Equal(whole, await File.ReadAllBytesAsync(path));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("audit.log")).State);
        Assert.Equal(whole, await rig.ObjectBytesAsync("audit.log"));
    }

    [Fact]
    public async Task Files_copied_in_by_cp_and_by_File_Copy_which_hand_the_kernel_their_bytes_without_a_buffer_of_their_own_arrive_whole()
    {
        // cp tries copy_file_range and File.Copy sendfile: the kernel then writes a write-only handle from pages of its own.
        var (rig, mounted) = MountedRig();
        using var source = new TempDirectory("copy-source");
        var content = DriveRig.RandomBytes(3 * Size + 12345, 23);
        var original = Path.Combine(source.Path, "original.bin");
        await File.WriteAllBytesAsync(original, content);

        Command.Output("cp", original, Path.Combine(mounted.Root, "by-cp.bin"));
        File.Copy(original, Path.Combine(mounted.Root, "by-file-copy.bin"));
        await mounted.WaitForClosesAsync();

        foreach (var name in new[] { "by-cp.bin", "by-file-copy.bin" })
        {
            Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local(name)));
            Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync(name)).State);
            Assert.Equal(content, await rig.ObjectBytesAsync(name));
        }
    }

    [Fact]
    public async Task A_handle_that_reads_and_its_shared_map_see_a_write_only_handles_bytes_at_once()
    {
        var (rig, mounted) = MountedRig();
        var path = Path.Combine(mounted.Root, "ledger.db");
        var expected = DriveRig.RandomBytes(Size, 11);
        await File.WriteAllBytesAsync(path, expected);
        await mounted.WaitForClosesAsync();

        using (var both = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, bufferSize: 0))
        {
            // Read first, so the mount's page cache holds the old bytes for this handle and its map.
            both.ReadExactly(new byte[Size]);
            using var map = MemoryMappedFile.CreateFromFile(both, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: true);
            using var view = map.CreateViewAccessor(0, Size, MemoryMappedFileAccess.Read);
            Assert.Equal(expected[8192], view.ReadByte(8192));

            using (var writer = new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0))
            {
                writer.Position = 8192;
                writer.Write("written-only"u8);
            }
            "written-only"u8.CopyTo(expected.AsSpan(8192));

            // The map first: a read(2) would refresh the file's attributes, and a changed mtime drops the pages anyway.
            var mapped = new byte[12];
            view.ReadArray(8192, mapped, 0, 12);
            Assert.Equal("written-only"u8.ToArray(), mapped);
            var head = new byte[12];
            both.Position = 8192;
            both.ReadExactly(head);
            Assert.Equal("written-only"u8.ToArray(), head);
        }
        await mounted.WaitForClosesAsync();

        Assert.Equal(expected, await File.ReadAllBytesAsync(rig.Local("ledger.db")));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("ledger.db")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("ledger.db"));
    }
}
