using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Conformance;

/// <summary>
/// What every front end shows on a case-insensitive drive (docs/decisions/0019-case-insensitive-drives.md): a name in any case
/// is the entry the drive has for lookup, open, create, mkdir, delete, rmdir and rename; a folder lists each name once; the
/// engine hears the entry's own name. Plain .NET file APIs on the mounted folder, over a real engine, index and bucket.
/// </summary>
public abstract class CaseInsensitiveConformance : IAsyncLifetime
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: case-insensitive-conformance }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
        """;

    private readonly TempDirectory _mountFolder = new("mnt");
    private IMountedDrive? _mounted;

    protected CaseInsensitiveConformance(S3ServerFixture s3, bool stateOutsideCache = false)
    {
        Rig = new DriveRig(s3, Policy, stateOutsideCache: stateOutsideCache, caseInsensitive: true);
    }

    protected DriveRig Rig { get; }

    /// <summary>Mounts <paramref name="drive"/> at the empty folder <paramref name="mountPath"/>.</summary>
    protected abstract Task<IMountedDrive> MountAsync(IDriveFileSystem drive, string mountPath);

    public async Task InitializeAsync() => _mounted = await MountAsync(Rig.Engine, _mountFolder.Path);

    public async Task DisposeAsync()
    {
        if (_mounted is not null)
        {
            await _mounted.DisposeAsync();
        }
        await Rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted!.Root, path);

    private string[] Ls(string folder = "") =>
        [.. Directory.GetFileSystemEntries(Mounted(folder)).Select(Path.GetFileName).Order(StringComparer.Ordinal)!];

    private async Task SettleAndTickAsync()
    {
        await _mounted!.WaitForClosesAsync();
        Rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await Rig.Engine.TickAsync();
    }

    [ConformanceFact]
    public async Task A_name_in_another_case_is_the_file_for_stat_open_and_a_create_that_opens_it()
    {
        var first = DriveRig.RandomBytes(10_000, 1);
        var second = DriveRig.RandomBytes(7_000, 2);
        await File.WriteAllBytesAsync(Mounted("Report.TXT"), first);

        Assert.True(File.Exists(Mounted("REPORT.txt")));
        Assert.Equal(first.Length, new FileInfo(Mounted("report.txt")).Length);
        Assert.Equal(first, await File.ReadAllBytesAsync(Mounted("rEpOrT.tXt")));
        await File.WriteAllBytesAsync(Mounted("REPORT.TXT"), second);
        await _mounted!.WaitForClosesAsync();

        Assert.Equal(["Report.TXT"], Ls());
        Assert.Equal(second, await File.ReadAllBytesAsync(Mounted("Report.TXT")));
        Assert.Equal(FileState.Dirty, Rig.StateOf("Report.TXT"));
        Assert.Null(Rig.Engine.GetFile("REPORT.TXT"));
        Assert.Throws<IOException>(() => new FileStream(Mounted("report.TXT"), FileMode.CreateNew).Dispose());
    }

    [ConformanceFact]
    public async Task A_folder_in_another_case_is_the_folder_for_mkdir_and_for_files_made_in_it()
    {
        Directory.CreateDirectory(Mounted("Docs"));
        Directory.CreateDirectory(Mounted("DOCS"));
        await File.WriteAllTextAsync(Mounted("docs/Plan.md"), "plan");

        Assert.Equal(["Docs"], Ls());
        Assert.Equal(["Plan.md"], Ls("dOcS"));
        Assert.True(File.Exists(Path.Combine(Rig.CachePath, "Docs", "Plan.md")));
        Assert.Equal("plan", await File.ReadAllTextAsync(Mounted("DOCS/PLAN.MD")));
    }

    [ConformanceFact]
    public async Task A_delete_or_folder_removal_in_another_case_removes_the_entry_and_its_lower_case_object()
    {
        await File.WriteAllTextAsync(Mounted("Old.txt"), "old");
        await SettleAndTickAsync();
        Assert.NotNull(await Rig.Store.HeadAsync("old.txt"));
        Directory.CreateDirectory(Mounted("Empty"));

        File.Delete(Mounted("OLD.TXT"));
        Directory.Delete(Mounted("EMPTY"));
        await Rig.Engine.TickAsync();

        Assert.Empty(Ls());
        Assert.False(File.Exists(Mounted("oLD.txt")));
        Assert.Null(Rig.Engine.GetFile("Old.txt"));
        Assert.Null(await Rig.Store.HeadAsync("old.txt"));
    }

    [ConformanceFact]
    public void The_engines_own_folder_is_hidden_and_refused_in_every_case()
    {
        Assert.False(Directory.Exists(Mounted(".GeoDrive")));
        Assert.False(File.Exists(Mounted(".GEODRIVE/index.db")));
        Assert.DoesNotContain(Ls(), n => n.Equals(".geodrive", StringComparison.OrdinalIgnoreCase));
        Assert.ThrowsAny<IOException>(() => File.WriteAllText(Mounted(".GEODRIVE/planted.txt"), "x"));
        Assert.ThrowsAny<Exception>(() => Directory.CreateDirectory(Mounted(".GeoDrive")));
    }

    [ConformanceFact]
    public async Task A_name_deleted_through_another_case_can_be_made_again_at_once_under_the_name_it_had()
    {
        await File.WriteAllTextAsync(Mounted("Report.TXT"), "first");
        Assert.True(File.Exists(Mounted("Report.TXT")));

        File.Delete(Mounted("REPORT.TXT"));
        Assert.False(File.Exists(Mounted("Report.TXT")));
        await File.WriteAllTextAsync(Mounted("Report.TXT"), "second");

        Assert.Equal("second", await File.ReadAllTextAsync(Mounted("report.txt")));
        Assert.Equal(["Report.TXT"], Ls());
    }

    [ConformanceFact]
    public async Task A_rename_that_changes_only_the_case_renames_and_a_rename_onto_another_case_of_a_file_replaces_it()
    {
        await File.WriteAllTextAsync(Mounted("draft.txt"), "draft");
        await File.WriteAllTextAsync(Mounted("a.txt"), "a");
        await File.WriteAllTextAsync(Mounted("b.txt"), "b");

        File.Move(Mounted("DRAFT.TXT"), Mounted("Draft.txt"), overwrite: true);
        File.Move(Mounted("A.TXT"), Mounted("B.TXT"), overwrite: true);
        await _mounted!.WaitForClosesAsync();

        Assert.Equal(["Draft.txt", "b.txt"], Ls());
        Assert.Equal("draft", await File.ReadAllTextAsync(Mounted("draft.TXT")));
        Assert.Equal("a", await File.ReadAllTextAsync(Mounted("b.txt")));
        Assert.NotNull(Rig.Engine.GetFile("Draft.txt"));
        Assert.Null(Rig.Engine.GetFile("draft.txt"));
        Assert.Null(Rig.Engine.GetFile("a.txt"));
    }
}
