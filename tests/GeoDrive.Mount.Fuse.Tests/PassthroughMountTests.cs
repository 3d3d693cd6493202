using System.IO.MemoryMappedFiles;
using System.Runtime.InteropServices;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// FUSE passthrough (docs/decisions/0034-fuse-passthrough.md): with libfuse 3.17 (scripts/install-libfuse.sh) a local file
/// opened for reading is read by the kernel from the cache file, and a writer that opens it meanwhile still writes
/// through the service, so nothing it writes (by write(2) or through a shared map) is missed by the upload or stubbed away.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class PassthroughMountTests(S3ServerFixture s3, ITestOutputHelper output) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int Size = 1 << 20;

    // Passthrough needs libfuse 3.17 (libfuse3.so.4) and a kernel built with CONFIG_FUSE_PASSTHROUGH (Linux 6.9+; this
    // machine's 6.18 is). Where the kernel's configuration cannot be read, its version stands in.
    private static readonly bool Expected = NativeLibrary.TryLoad("libfuse3.so.4", out _) && KernelPassesThrough();

    private static bool KernelPassesThrough()
    {
        if (KernelConfig() is { } config)
        {
            return config.Split('\n').Contains("CONFIG_FUSE_PASSTHROUGH=y");
        }
        return Environment.OSVersion.Version >= new Version(6, 9);
    }

    private static string? KernelConfig()
    {
        if (File.Exists("/proc/config.gz"))
        {
            using var gzip = new System.IO.Compression.GZipStream(File.OpenRead("/proc/config.gz"), System.IO.Compression.CompressionMode.Decompress);
            return new StreamReader(gzip).ReadToEnd();
        }
        var boot = $"/boot/config-{File.ReadAllText("/proc/sys/kernel/osrelease").Trim()}";
        return File.Exists(boot) ? File.ReadAllText(boot) : null;
    }

    private async Task<(DriveRig Rig, FuseMountedDrive Mounted, byte[] Content)> UploadedFileAsync(string name)
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: passthrough-tests }
            spec:
              upload: { settle: 1h }
            """));
        var mounted = Mount(rig.Engine);
        var content = DriveRig.RandomBytes(Size, name.Length);
        await File.WriteAllBytesAsync(Path.Combine(mounted.Root, name), content);
        await mounted.WaitForClosesAsync();
        // Offered by the kernel at the connection's INIT, which the first request brings; taken where the library can.
        Assert.Equal(Expected, mounted.Mount.PassesThrough);
        output.WriteLine($"passthrough expected: {Expected}; passthrough: {mounted.Mount.PassesThrough}");
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync(name)).State);
        return (rig, mounted, content);
    }

    [Fact]
    public async Task A_local_file_and_a_recalled_stub_opened_for_reading_are_read_by_the_kernel_from_the_cache_file_without_a_read_reaching_the_service()
    {
        var (rig, mounted, content) = await UploadedFileAsync("scan.tif");
        var path = Path.Combine(mounted.Root, "scan.tif");

        var before = mounted.Mount.ReadsServed;
        Assert.Equal(content, await File.ReadAllBytesAsync(path));
        var local = mounted.Mount.ReadsServed - before;

        await mounted.WaitForClosesAsync();
        await rig.Engine.StubAsync("scan.tif");
        Assert.Equal(0, rig.AllocatedBlocks("scan.tif"));
        before = mounted.Mount.ReadsServed;
        Assert.Equal(content, await File.ReadAllBytesAsync(path));
        var recalled = mounted.Mount.ReadsServed - before;

        output.WriteLine($"reads the service answered: {local} for the local file, {recalled} for the recalled stub");
        if (mounted.Mount.PassesThrough)
        {
            Assert.Equal((0, 0), (local, recalled));
        }
        else
        {
            Assert.True(local > 0 && recalled > 0);
        }
    }

    [Fact]
    public async Task A_writer_opening_a_file_while_a_reader_passes_through_writes_through_the_service_and_the_bucket_gets_every_byte_it_wrote()
    {
        var (rig, mounted, content) = await UploadedFileAsync("ledger.db");
        var path = Path.Combine(mounted.Root, "ledger.db");
        var expected = content.ToArray();

        using (var reader = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            reader.ReadExactly(new byte[Size]);
            using (var writer = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite))
            {
                writer.Write("hello"u8);
                writer.Flush();
                "hello"u8.CopyTo(expected);
                // The reader reads the cache file the service just wrote.
                reader.Position = 0;
                var head = new byte[5];
                reader.ReadExactly(head);
                Assert.Equal("hello"u8.ToArray(), head);

                // A shared writable map of the writer goes to the cache file in the kernel, past the service.
                using var map = MemoryMappedFile.CreateFromFile(writer, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: true);
                using var view = map.CreateViewAccessor(4096, 4096, MemoryMappedFileAccess.ReadWrite);
                view.WriteArray(0, "mapped"u8.ToArray(), 0, 6);
                view.Flush();
                "mapped"u8.CopyTo(expected.AsSpan(4096));
            }
        }
        await mounted.WaitForClosesAsync();

        Assert.Equal(FileState.Dirty, rig.StateOf("ledger.db"));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("ledger.db")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("ledger.db"));
    }

    [Fact]
    public async Task A_shared_map_written_after_its_writer_closed_the_file_counts_as_open_until_unmapped_and_the_bucket_gets_its_bytes()
    {
        var (rig, mounted, content) = await UploadedFileAsync("index.bin");
        var path = Path.Combine(mounted.Root, "index.bin");
        var expected = content.ToArray();

        MemoryMappedFile map;
        using (var reader = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            reader.ReadExactly(new byte[16]);
            using var writer = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
            map = MemoryMappedFile.CreateFromFile(writer, null, 0, MemoryMappedFileAccess.ReadWrite, HandleInheritability.None, leaveOpen: true);
        }
        using (map)
        {
            // Both descriptors closed; the map, written now, keeps the writer's open (the kernel releases it at unmap).
            using var view = map.CreateViewAccessor(8192, 4096, MemoryMappedFileAccess.ReadWrite);
            view.WriteArray(0, "late"u8.ToArray(), 0, 4);
            view.Flush();
            "late"u8.CopyTo(expected.AsSpan(8192));
            Assert.True(mounted.Mount.OpenHandleCount > 0);
        }
        await mounted.WaitForClosesAsync();

        // Its close counted as a change (the handle could map) with nothing written through the service.
        Assert.Equal(FileState.Dirty, rig.StateOf("index.bin"));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("index.bin")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("index.bin"));
        await rig.Engine.StubAsync("index.bin");
        Assert.Equal(expected, await File.ReadAllBytesAsync(path));
    }

    [Fact]
    public async Task A_reader_opening_a_file_a_writer_holds_open_is_served_by_the_service_and_sees_what_was_written()
    {
        var (_, mounted, content) = await UploadedFileAsync("notes.txt");
        var path = Path.Combine(mounted.Root, "notes.txt");

        using var writer = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        writer.Write("draft"u8);
        writer.Flush();
        var before = mounted.Mount.ReadsServed;
        using (var reader = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            var all = new byte[Size];
            reader.ReadExactly(all);
            Assert.Equal("draft"u8.ToArray(), all[..5]);
            Assert.Equal(content[5..], all[5..]);
        }

        Assert.True(mounted.Mount.ReadsServed > before);
    }
}
