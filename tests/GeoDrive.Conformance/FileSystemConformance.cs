using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Conformance;

/// <summary>A drive mounted by one front end, for the conformance suite.</summary>
public interface IMountedDrive : IAsyncDisposable
{
    /// <summary>The folder applications use.</summary>
    string Root { get; }

    /// <summary>
    /// Waits until every handle the test closed has reached the engine: an OS may deliver "closed"
    /// after close() returned (FUSE sends release asynchronously).
    /// </summary>
    Task WaitForClosesAsync();
}

/// <summary>
/// The file-system behaviour every front end shows (docs/architecture.md, "The front-end contract"), written once. A front end's test
/// project derives from this class and says how to mount; the tests use plain .NET file APIs on the
/// mounted folder, over a real engine, LiteDB index and bucket, with a manual clock for settle and
/// access wait.
/// </summary>
public abstract class FileSystemConformance : IAsyncLifetime
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: conformance }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
          excludes: [ "**/*.tmp" ]
        """;

    private readonly TempDirectory _mountFolder = new("mnt");
    private IMountedDrive? _mounted;

    /// <param name="stateOutsideCache">The front end serves the cache folder itself (ProjFS), so the engine's state is kept beside it, as the Windows service keeps it.</param>
    protected FileSystemConformance(S3ServerFixture s3, bool stateOutsideCache = false)
    {
        Rig = new DriveRig(s3, Policy, stateOutsideCache: stateOutsideCache);
    }

    protected DriveRig Rig { get; }

    protected string Root => _mounted?.Root ?? throw new InvalidOperationException("not mounted");

    /// <summary>Mounts <paramref name="drive"/> at the empty folder <paramref name="mountPath"/>.</summary>
    protected abstract Task<IMountedDrive> MountAsync(IDriveFileSystem drive, string mountPath);

    /// <summary>What the engine is given as the drive: the engine itself, or a recorder around it.</summary>
    protected virtual IDriveFileSystem DriveUnderTest => Rig.Engine;

    public async Task InitializeAsync() => _mounted = await MountAsync(DriveUnderTest, _mountFolder.Path);

    public async Task DisposeAsync()
    {
        if (_mounted is not null)
        {
            await _mounted.DisposeAsync();
        }
        await Rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    protected string Mounted(string path) => Path.Combine(Root, path);

    /// <summary>Lets the settle delay pass and runs the scheduler once: settled files are uploaded.</summary>
    protected async Task SettleAndTickAsync()
    {
        await _mounted!.WaitForClosesAsync();
        Rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await Rig.Engine.TickAsync();
    }

    private async Task<byte[]> WriteUploadedAsync(string path, int size, int seed)
    {
        var bytes = DriveRig.RandomBytes(size, seed);
        await File.WriteAllBytesAsync(Mounted(path), bytes);
        await SettleAndTickAsync();
        Assert.Equal(FileState.Cached, Rig.StateOf(path));
        return bytes;
    }

    [ConformanceFact]
    public async Task Bytes_written_reach_the_bucket_once_the_settle_delay_has_passed()
    {
        Directory.CreateDirectory(Mounted("docs"));
        var bytes = DriveRig.RandomBytes(300_000, 1);
        await File.WriteAllBytesAsync(Mounted("docs/report.bin"), bytes);

        Assert.Equal(FileState.Dirty, Rig.StateOf("docs/report.bin"));
        Assert.Null(await Rig.ObjectBytesAsync("docs/report.bin"));

        await SettleAndTickAsync();

        Assert.Equal(FileState.Cached, Rig.StateOf("docs/report.bin"));
        Assert.Equal(bytes, await Rig.ObjectBytesAsync("docs/report.bin"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Mounted("docs/report.bin")));
    }

    [ConformanceFact]
    public async Task A_stub_keeps_its_size_and_time_frees_its_blocks_and_reads_back_its_bytes()
    {
        var bytes = await WriteUploadedAsync("scan.bin", 1_000_000, 2);
        var written = File.GetLastWriteTimeUtc(Mounted("scan.bin"));

        await Rig.Engine.StubAsync("scan.bin");

        Assert.Equal(FileState.Stubbed, Rig.StateOf("scan.bin"));
        Assert.Equal(0, Rig.AllocatedBlocks("scan.bin"));
        Assert.Equal(bytes.Length, new FileInfo(Mounted("scan.bin")).Length);
        Assert.Equal(written, File.GetLastWriteTimeUtc(Mounted("scan.bin")));

        Assert.Equal(bytes, await File.ReadAllBytesAsync(Mounted("scan.bin")));
        Assert.Equal(FileState.Cached, Rig.StateOf("scan.bin"));
    }

    [ConformanceFact]
    public async Task Appending_to_a_stub_recalls_it_first()
    {
        var bytes = await WriteUploadedAsync("log.txt", 5_000, 3);
        await Rig.Engine.StubAsync("log.txt");

        await File.AppendAllTextAsync(Mounted("log.txt"), "tail");
        // The engine hears of the write with the handle's release, which the kernel sends after close() returned.
        await _mounted!.WaitForClosesAsync();

        byte[] expected = [.. bytes, .. System.Text.Encoding.ASCII.GetBytes("tail")];
        Assert.Equal(expected, await File.ReadAllBytesAsync(Mounted("log.txt")));
        Assert.Equal(FileState.Dirty, Rig.StateOf("log.txt"));
    }

    [ConformanceFact]
    public async Task A_stub_overwritten_from_the_start_holds_only_the_new_bytes()
    {
        await WriteUploadedAsync("old.bin", 200_000, 4);
        await Rig.Engine.StubAsync("old.bin");

        await using (var stream = new FileStream(Mounted("old.bin"), FileMode.Truncate, FileAccess.Write))
        {
            await stream.WriteAsync(System.Text.Encoding.ASCII.GetBytes("new"));
        }
        await _mounted!.WaitForClosesAsync();

        Assert.Equal("new", await File.ReadAllTextAsync(Mounted("old.bin")));
        Assert.Equal(FileState.Dirty, Rig.StateOf("old.bin"));
        await SettleAndTickAsync();
        Assert.Equal("new"u8.ToArray(), await Rig.ObjectBytesAsync("old.bin"));
    }

    [ConformanceFact]
    public async Task Overwriting_a_file_uploads_the_new_bytes()
    {
        await WriteUploadedAsync("plan.txt", 10_000, 5);
        var second = DriveRig.RandomBytes(7_000, 6);

        await File.WriteAllBytesAsync(Mounted("plan.txt"), second);
        await _mounted!.WaitForClosesAsync();
        Assert.Equal(FileState.Dirty, Rig.StateOf("plan.txt"));
        await SettleAndTickAsync();

        Assert.Equal(second, await Rig.ObjectBytesAsync("plan.txt"));
    }

    [ConformanceFact]
    public async Task A_renamed_stub_keeps_its_bytes_under_its_new_name()
    {
        var bytes = await WriteUploadedAsync("a.bin", 50_000, 7);
        await Rig.Engine.StubAsync("a.bin");

        File.Move(Mounted("a.bin"), Mounted("b.bin"));

        Assert.False(File.Exists(Mounted("a.bin")));
        Assert.Equal(FileState.Stubbed, Rig.StateOf("b.bin"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Mounted("b.bin")));
        await SettleAndTickAsync();
        await SettleAndTickAsync();
        Assert.Equal(bytes, await Rig.ObjectBytesAsync("b.bin"));
    }

    [ConformanceFact]
    public async Task A_deleted_file_leaves_the_bucket_at_the_next_tick()
    {
        await WriteUploadedAsync("gone.txt", 1_000, 8);

        File.Delete(Mounted("gone.txt"));
        Assert.False(File.Exists(Rig.Local("gone.txt")));
        await Rig.Engine.TickAsync();

        Assert.Null(await Rig.Store.HeadAsync("gone.txt"));
        Assert.Null(Rig.Engine.GetFile("gone.txt"));
    }

    [ConformanceFact]
    public async Task Folders_list_their_files_and_a_removed_folder_is_gone()
    {
        Directory.CreateDirectory(Mounted("projects/alpha"));
        await File.WriteAllTextAsync(Mounted("projects/alpha/plan.txt"), "plan");
        await File.WriteAllTextAsync(Mounted("projects/beta.txt"), "beta");

        var names = Directory.EnumerateFileSystemEntries(Mounted("projects")).Select(Path.GetFileName).Order(StringComparer.Ordinal);
        Assert.Equal(["alpha", "beta.txt"], names);

        File.Delete(Mounted("projects/alpha/plan.txt"));
        Directory.Delete(Mounted("projects/alpha"));
        Assert.False(Directory.Exists(Mounted("projects/alpha")));
        Assert.False(Directory.Exists(Rig.Local("projects/alpha")));
    }

    [ConformanceFact]
    public async Task The_engines_own_folder_is_neither_listed_nor_reachable()
    {
        await File.WriteAllTextAsync(Mounted("x.txt"), "x");

        Assert.Equal(["x.txt"], Directory.EnumerateFileSystemEntries(Root).Select(Path.GetFileName));
        Assert.False(File.Exists(Mounted(".geodrive/index.db")));
        var refused = Record.Exception(() => Directory.CreateDirectory(Mounted(".geodrive/mine")));
        Assert.True(refused is UnauthorizedAccessException or IOException, $"expected a refusal, got {refused}");
        Assert.True(File.Exists(Rig.IndexPath));
    }

    [ConformanceFact]
    public async Task An_open_file_is_not_stubbed_until_its_last_handle_closes()
    {
        await WriteUploadedAsync("busy.bin", 20_000, 9);

        var first = File.OpenRead(Mounted("busy.bin"));
        var second = File.OpenRead(Mounted("busy.bin"));
        await first.DisposeAsync();
        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => Rig.Engine.StubAsync("busy.bin"));
        Assert.Equal(ErrorIds.FileBusy, refused.ErrorId);

        await second.DisposeAsync();
        await _mounted!.WaitForClosesAsync();
        await Rig.Engine.StubAsync("busy.bin");
        Assert.Equal(FileState.Stubbed, Rig.StateOf("busy.bin"));
    }

    [ConformanceFact]
    public async Task An_excluded_file_stays_local_and_readable()
    {
        await File.WriteAllTextAsync(Mounted("build.tmp"), "scratch");
        await SettleAndTickAsync();

        Assert.Equal(FileState.Excluded, Rig.StateOf("build.tmp"));
        Assert.Null(await Rig.Store.HeadAsync("build.tmp"));
        Assert.Equal("scratch", await File.ReadAllTextAsync(Mounted("build.tmp")));
    }
}
