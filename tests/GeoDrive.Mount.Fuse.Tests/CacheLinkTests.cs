using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// A link that gets into a drive's cache is never followed by the mount, however it races the mount's own
/// checks. The cache is the service's alone, so here root puts the link there behind the mount, as a restore
/// or an older version's cache could, and a thread of the test swaps a cache folder and a link to a folder
/// outside (renameat2 RENAME_EXCHANGE, atomic) as fast as it can while files are opened through the mount:
/// a check of the path followed by an open of the path loses that race; an open that refuses links at
/// every step of the path (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) never does.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class CacheLinkTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    /// <summary>Opens that reach the service through a path the kernel knows as a folder; while it holds a lookup that met the link (for the entry timeout), opens fail before they reach it.</summary>
    private const int Served = 60;
    private static readonly TimeSpan Longest = TimeSpan.FromSeconds(30);
    private const string Theirs = "not the drive's";
    private readonly TempDirectory _outside = new("outside");

    public override async Task DisposeAsync()
    {
        await base.DisposeAsync();
        _outside.Dispose();
    }

    /// <summary>docs/a.txt written through the mount; beside docs in the cache, docs.link: a link to a folder outside that holds its own a.txt.</summary>
    private async Task<(FuseMountedDrive Mounted, string Theirs, NameSwapper Swapper)> RacedAsync()
    {
        var rig = Cleanup.Push(new DriveRig(s3));
        var mounted = Mount(rig.Engine);
        Directory.CreateDirectory(Path.Combine(mounted.Root, "docs"));
        await File.WriteAllTextAsync(Path.Combine(mounted.Root, "docs", "a.txt"), "the drive's bytes");
        await mounted.WaitForClosesAsync();
        var theirs = Path.Combine(_outside.Path, "a.txt");
        await File.WriteAllTextAsync(theirs, Theirs);
        File.SetUnixFileMode(theirs, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        File.CreateSymbolicLink(rig.Local("docs.link"), _outside.Path);
        return (mounted, theirs, Cleanup.Push(new NameSwapper(rig.Local("docs"), rig.Local("docs.link"))));
    }

    [Fact]
    public async Task A_read_through_the_mount_never_returns_the_bytes_of_a_file_outside_the_cache_while_a_cache_folder_and_a_link_are_swapped()
    {
        var (mounted, _, swapper) = await RacedAsync();
        var inMount = Path.Combine(mounted.Root, "docs", "a.txt");

        var read = new List<string>();
        var watch = System.Diagnostics.Stopwatch.StartNew();
        while (read.Count < Served && watch.Elapsed < Longest)
        {
            try
            {
                read.Add(await File.ReadAllTextAsync(inMount));
            }
            catch (IOException)
            {
            }
        }
        swapper.Dispose();

        Assert.DoesNotContain(Theirs, read);
        Assert.Contains("the drive's bytes", read);
    }

    [Fact]
    public async Task A_write_truncate_or_chmod_through_the_mount_never_changes_a_file_outside_the_cache_while_a_cache_folder_and_a_link_are_swapped()
    {
        var (mounted, theirs, swapper) = await RacedAsync();
        var inMount = Path.Combine(mounted.Root, "docs", "a.txt");

        var written = 0;
        var watch = System.Diagnostics.Stopwatch.StartNew();
        for (var i = 0; written < Served && watch.Elapsed < Longest; i++)
        {
            try
            {
                switch (i % 3)
                {
                    case 0:
                        await File.AppendAllTextAsync(inMount, "+");
                        break;
                    case 1:
                        using (var stream = new FileStream(inMount, FileMode.Open, FileAccess.Write))
                        {
                            stream.SetLength(3);
                        }
                        break;
                    default:
                        File.SetUnixFileMode(inMount, (UnixFileMode)0b111_111_111);
                        break;
                }
                written++;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
            }
        }
        swapper.Dispose();

        Assert.Equal(Theirs, await File.ReadAllTextAsync(theirs));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(theirs));
        Assert.True(written > 0, "no write went through the mount at all");
    }
}
