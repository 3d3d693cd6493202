using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// A real mount keeps the kernel's names of files closed or looked up to its budget
/// (docs/decisions/0036-names-the-kernel-keeps.md): a name told to the kernel is looked up again at its next use (the
/// kernel had dropped it, and libfuse its node), a name within the budget is not, and either reads the bytes that were
/// written.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class KernelNamesMountTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int Kept = 20;

    [Fact]
    public async Task Past_the_budget_the_kernel_forgets_the_least_recently_used_names_and_keeps_the_rest()
    {
        var rig = Cleanup.Push(new DriveRig(s3));
        // Attributes and names trusted for an hour: a name the kernel still holds is answered without asking the service.
        var mounted = Mount(rig.Engine, new FuseMountOptions { DriveName = "names", NamesKept = Kept, AttributeTimeout = TimeSpan.FromHours(1) });
        var asked = new System.Collections.Concurrent.ConcurrentQueue<string>();
        mounted.Mount.AttributesAsked = asked.Enqueue;
        Directory.CreateDirectory(Path.Combine(mounted.Root, "scans"));
        var written = new List<(string Path, byte[] Bytes)>();
        async Task WriteAsync(int count)
        {
            for (var n = 0; n < count; n++)
            {
                var i = written.Count;
                var path = i % 3 == 0 ? $"top-{i:D2}.bin" : $"scans/page-{i:D2}.bin";
                var bytes = DriveRig.RandomBytes(100 + i, i);
                await File.WriteAllBytesAsync(Path.Combine(mounted.Root, path), bytes);
                written.Add((path, bytes));
            }
            await mounted.WaitForClosesAsync();
        }
        HashSet<string> AskedFor(IEnumerable<(string Path, byte[] Bytes)> files)
        {
            asked.Clear();
            foreach (var (path, _) in files)
            {
                _ = new FileInfo(Path.Combine(mounted.Root, path)).Length;
            }
            return [.. asked];
        }

        // The first 20 fill the budget and are read once: a write leaves the kernel's size and times of a file stale,
        // so only a lookup would ask for them again.
        await WriteAsync(Kept);
        _ = AskedFor(written);
        Assert.Empty(AskedFor(written));
        // 40 more: the 40 used first are told to the kernel.
        await WriteAsync(2 * Kept);
        await mounted.Mount.WhenNamesToldAsync();
        Assert.Equal(2 * Kept, mounted.Mount.NamesForgotten);

        var first = written.Take(Kept).ToList();
        var last = written.Skip(2 * Kept).ToList();
        // The last 20 are still the kernel's: once read, they are not asked for.
        _ = AskedFor(last);
        Assert.Empty(AskedFor(last));
        // The first 20 are asked for again (at the root and in the subfolder alike): the kernel had dropped their names.
        var askedAgain = AskedFor(first);
        Assert.All(first, w => Assert.Contains(w.Path, askedAgain));

        foreach (var (path, bytes) in written)
        {
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(mounted.Root, path)));
            Assert.Equal(FileState.Dirty, rig.StateOf(path));
        }
    }

    [Fact]
    public async Task Names_the_kernel_learned_by_lookups_alone_are_kept_to_the_budget_too()
    {
        var rig = Cleanup.Push(new DriveRig(s3));
        // 60 files the kernel has never seen: written beside the mount, as the engine does for a file from the bucket.
        var files = new List<(string Path, byte[] Bytes)>();
        for (var i = 0; i < 3 * Kept; i++)
        {
            var path = i % 2 == 0 ? $"scan-{i:D2}.tif" : $"archive/2025/scan-{i:D2}.tif";
            var bytes = DriveRig.RandomBytes(50 + i, 1_000 + i);
            await rig.WriteAsync(path, bytes);
            files.Add((path, bytes));
        }
        var mounted = Mount(rig.Engine, new FuseMountOptions { DriveName = "scan", NamesKept = Kept, AttributeTimeout = TimeSpan.FromHours(1) });
        var asked = new System.Collections.Concurrent.ConcurrentQueue<string>();
        mounted.Mount.AttributesAsked = asked.Enqueue;
        // The files' names asked for (a folder's attributes are asked for again after a name in it was forgotten).
        HashSet<string> Stat(IEnumerable<(string Path, byte[] Bytes)> some)
        {
            asked.Clear();
            foreach (var (path, _) in some)
            {
                _ = new FileInfo(Path.Combine(mounted.Root, path)).Length;
            }
            return [.. asked.Where(p => p.EndsWith(".tif", StringComparison.Ordinal))];
        }

        // A scan of sizes, as `ls -l` or a backup agent makes it: lookups only, no file opened.
        Assert.Equal(files.Count, Stat(files).Count);
        await mounted.Mount.WhenNamesToldAsync();
        Assert.Equal(2 * Kept, mounted.Mount.NamesForgotten);

        // The last 20 looked up are still the kernel's; the first 20 were dropped and are looked up again.
        Assert.Empty(Stat(files.Skip(2 * Kept)));
        var askedAgain = Stat(files.Take(Kept));
        Assert.All(files.Take(Kept), f => Assert.Contains(f.Path, askedAgain));
        foreach (var (path, bytes) in files)
        {
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(mounted.Root, path)));
        }
    }

    [Fact]
    public async Task A_file_forgotten_while_another_handle_holds_it_open_stays_usable_through_both()
    {
        var rig = Cleanup.Push(new DriveRig(s3));
        var mounted = Mount(rig.Engine, new FuseMountOptions { DriveName = "names", NamesKept = 0 });
        var path = Path.Combine(mounted.Root, "open.log");
        await File.WriteAllTextAsync(path, "first\n");

        await using var held = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
        // Another open and close of the same file: its name is told to the kernel while `held` is open.
        Assert.Equal("first\n", await File.ReadAllTextAsync(path));
        await mounted.Mount.WhenNamesToldAsync();
        await held.WriteAsync("second\n"u8.ToArray());
        await held.FlushAsync();

        Assert.Equal("first\nsecond\n", await File.ReadAllTextAsync(path));
        await held.DisposeAsync();
        await mounted.WaitForClosesAsync();
        await rig.Engine.UploadAsync("open.log");
        Assert.Equal("first\nsecond\n"u8.ToArray(), await rig.ObjectBytesAsync("open.log"));
    }
}
