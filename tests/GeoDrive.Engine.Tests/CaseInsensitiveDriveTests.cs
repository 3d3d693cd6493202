using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A case-insensitive drive (docs/decisions/0019-case-insensitive-drives.md) against a real bucket: keys in lower case with the
/// name as written in metadata, that name back on another drive, keys of one name in two cases shown once with one event,
/// and a case-sensitive drive as before.
/// </summary>
public sealed class CaseInsensitiveDriveTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: case-insensitive }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s, updateWait: 5m }
        """;

    private static readonly TimeSpan UpdateWait = TimeSpan.FromMinutes(5);
    private static readonly Caller Ls = new(100, "ls");
    private readonly List<DriveRig> _rigs = [];

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var rig in _rigs)
        {
            await rig.DisposeAsync();
        }
    }

    private async Task<DriveRig> StartAsync(bool caseInsensitive, string? bucket = null)
    {
        var rig = new DriveRig(s3, Policy, caseInsensitive: caseInsensitive, bucket: bucket);
        _rigs.Add(rig);
        await rig.Engine.StartAsync();
        return rig;
    }

    private static Task PutRawAsync(DriveRig rig, string key, string content) =>
        rig.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = key, ContentBody = content });

    /// <summary>Lists the folders twice, updateWait apart, as two listings by a user would.</summary>
    private static async Task ListTwiceAsync(DriveRig rig, params string[] folders)
    {
        foreach (var pass in new[] { 1, 2 })
        {
            foreach (var folder in folders)
            {
                await rig.Engine.BeforeEnumerateAsync(folder, Ls);
            }
            rig.Clock.Advance(UpdateWait + TimeSpan.FromSeconds(1));
        }
    }

    private static IEnumerable<string> CacheEntries(DriveRig rig) =>
        Directory.EnumerateFileSystemEntries(rig.CachePath, "*", SearchOption.AllDirectories)
            .Select(p => Path.GetRelativePath(rig.CachePath, p)).Where(p => !p.StartsWith(".geodrive", StringComparison.Ordinal)).Order(StringComparer.Ordinal);

    [Fact]
    public async Task A_file_goes_up_under_its_lower_case_key_with_its_name_as_written_in_metadata()
    {
        var rig = await StartAsync(caseInsensitive: true);
        var bytes = DriveRig.RandomBytes(5_000, 1);
        await rig.WriteAsync("Docs/Résumé Q3.TXT", bytes);

        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("Docs/Résumé Q3.TXT")).State);

        var head = await rig.Store.HeadAsync("docs/résumé q3.txt");
        Assert.NotNull(head);
        Assert.Equal("R%C3%A9sum%C3%A9 Q3.TXT", head.Metadata[ObjectLayout.NameKey]);
        Assert.Null(await rig.Store.HeadAsync("Docs/Résumé Q3.TXT"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("docs/résumé q3.txt"));
    }

    [Fact]
    public async Task Another_case_insensitive_drive_on_the_bucket_shows_the_name_as_written_by_listing_and_by_lookup()
    {
        var first = await StartAsync(caseInsensitive: true);
        var report = DriveRig.RandomBytes(3_000, 2);
        var plan = DriveRig.RandomBytes(4_000, 3);
        await first.WriteAsync("Report.TXT", report);
        await first.WriteAsync("Plan.Md", plan);
        await first.Engine.UploadAsync("Report.TXT");
        await first.Engine.UploadAsync("Plan.Md");

        var listed = await StartAsync(caseInsensitive: true, bucket: first.Bucket);
        await listed.Engine.BeforeEnumerateAsync("", Ls);
        Assert.Equal(["Plan.Md", "Report.TXT"], CacheEntries(listed));
        Assert.Equal(report, await listed.ReadAsync("Report.TXT"));

        var lookedUp = await StartAsync(caseInsensitive: true, bucket: first.Bucket);
        // An application asks for the name in yet another case: the stub is made under the name as written.
        Assert.True(await lookedUp.Engine.LookupMissingAsync("PLAN.MD", Ls));
        Assert.Equal(["Plan.Md"], CacheEntries(lookedUp));
        Assert.Equal(plan, await lookedUp.ReadAsync("Plan.Md"));
    }

    [Fact]
    public async Task Two_keys_that_differ_only_in_case_are_shown_once_and_each_hidden_key_is_named_in_one_event()
    {
        var rig = await StartAsync(caseInsensitive: true);
        // Written by another tool: one pair with a key in the drive's case, one pair with none.
        await PutRawAsync(rig, "notes.txt", "lower");
        await PutRawAsync(rig, "NOTES.txt", "upper");
        await PutRawAsync(rig, "Mixed.TXT", "mixed");
        await PutRawAsync(rig, "MIXED.txt", "capitals");

        await ListTwiceAsync(rig, "");

        // The key in the drive's case, else the ordinal-first ("MIXED.txt" < "Mixed.TXT").
        Assert.Equal(["MIXED.txt", "notes.txt"], CacheEntries(rig));
        Assert.Equal("lower", System.Text.Encoding.UTF8.GetString(await rig.ReadAsync("notes.txt")));
        var hidden = rig.Engine.ReadEvents(kind: DriveEventKind.Error).Where(e => e.ErrorId == ErrorIds.ObjectNameTaken).Select(e => e.Message).ToList();
        Assert.Equal(2, hidden.Count);
        Assert.Contains(hidden, m => m.Contains("'NOTES.txt' is not shown", StringComparison.Ordinal) && m.Contains("'notes.txt' is shown", StringComparison.Ordinal));
        Assert.Contains(hidden, m => m.Contains("'Mixed.TXT' is not shown", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_key_written_in_another_case_by_another_tool_is_shown_read_and_left_where_it_is_across_a_restart()
    {
        var rig = await StartAsync(caseInsensitive: true);
        await PutRawAsync(rig, "Photo.JPG", "pixels");

        await ListTwiceAsync(rig, "");
        Assert.Equal("pixels", System.Text.Encoding.UTF8.GetString(await rig.ReadAsync("Photo.JPG")));
        Assert.Equal(FileState.Cached, rig.StateOf("Photo.JPG"));
        await rig.RestartAsync();
        await rig.Engine.TickAsync();

        // Nothing was copied to the lower-case key, and nothing deleted: only a change made here writes it anew.
        Assert.NotNull(await rig.Store.HeadAsync("Photo.JPG"));
        Assert.Null(await rig.Store.HeadAsync("photo.jpg"));
        Assert.Equal(FileState.Cached, rig.StateOf("Photo.JPG"));
    }

    /// <summary>As the mount does: the cache changes first, then the engine is told.</summary>
    private static void RenameByMount(DriveRig rig, string from, string to)
    {
        File.Move(rig.Local(from), rig.Local(to));
        rig.Engine.Renamed(from, to, rig.Caller, isDirectory: false);
    }

    private static void MakeFolderByMount(DriveRig rig, string path)
    {
        Directory.CreateDirectory(rig.Local(path));
        rig.Engine.Created(path, rig.Caller, isDirectory: true);
    }

    [Fact]
    public async Task A_renamed_stub_is_copied_to_its_new_lower_case_key_and_is_recalled_from_it_across_a_restart()
    {
        var rig = await StartAsync(caseInsensitive: true);
        var bytes = DriveRig.RandomBytes(6_000, 5);
        await rig.WriteAsync("Docs/Report.TXT", bytes);
        await rig.Engine.UploadAsync("Docs/Report.TXT");
        await rig.Engine.StubAsync("Docs/Report.TXT");

        RenameByMount(rig, "Docs/Report.TXT", "Docs/Final Report.TXT");
        await rig.Engine.TickAsync();
        await rig.Engine.TickAsync();

        // The copy is made under the new name's lower-case key, with the name as written; the old key goes once the
        // stub records the new one.
        Assert.Equal(bytes, await rig.ObjectBytesAsync("docs/final report.txt"));
        Assert.Equal("Final Report.TXT", (await rig.Store.HeadAsync("docs/final report.txt"))!.Metadata[ObjectLayout.NameKey]);
        Assert.Null(await rig.Store.HeadAsync("docs/report.txt"));
        Assert.Equal("docs/final report.txt", rig.Engine.GetFile("Docs/Final Report.TXT")!.ObjectKey);
        await rig.RestartAsync();
        await rig.Engine.TickAsync();
        Assert.Equal(bytes, await rig.ReadAsync("Docs/Final Report.TXT"));
    }

    [Fact]
    public async Task A_rename_that_only_changes_the_case_writes_the_new_spelling_into_the_object_and_another_drive_shows_it()
    {
        var rig = await StartAsync(caseInsensitive: true);
        var bytes = DriveRig.RandomBytes(2_000, 6);
        await rig.WriteAsync("report.txt", bytes);
        await rig.Engine.UploadAsync("report.txt");

        RenameByMount(rig, "report.txt", "Report.TXT");
        await rig.Engine.TickAsync();

        // The same key and bytes; a copy onto itself carries the new spelling, and the file records that version.
        var after = await rig.Store.HeadAsync("report.txt");
        Assert.Equal("Report.TXT", after!.Metadata[ObjectLayout.NameKey]);
        Assert.Equal(bytes, await rig.ObjectBytesAsync("report.txt"));
        Assert.Equal(FileState.Cached, rig.StateOf("Report.TXT"));
        Assert.True(ObjectLayout.SameETag(after.ETag, rig.Engine.GetFile("Report.TXT")!.ETag));

        var other = await StartAsync(caseInsensitive: true, bucket: rig.Bucket);
        await other.Engine.BeforeEnumerateAsync("", Ls);
        Assert.Equal(["Report.TXT"], CacheEntries(other));
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public async Task A_property_change_on_a_file_of_mixed_case_reaches_its_object()
    {
        var rig = await StartAsync(caseInsensitive: true);
        await rig.WriteAsync("Plans/Q3 Plan.PDF", DriveRig.RandomBytes(1_000, 7));
        await rig.Engine.UploadAsync("Plans/Q3 Plan.PDF");

        File.SetUnixFileMode(rig.Local("Plans/Q3 Plan.PDF"), UnixFileMode.UserRead | UnixFileMode.GroupRead);
        rig.Engine.PropertiesChanged("Plans/Q3 Plan.PDF", rig.Caller);
        await rig.Engine.TickAsync();

        Assert.Equal("440", (await rig.Store.HeadAsync("plans/q3 plan.pdf"))!.Metadata[ObjectLayout.ModeKey]);
    }

    [Fact]
    public async Task A_folder_made_here_gets_its_marker_and_keeps_its_case_on_a_new_host()
    {
        var rig = await StartAsync(caseInsensitive: true);
        MakeFolderByMount(rig, "Clients");
        MakeFolderByMount(rig, "Clients/Acme Corp");
        await rig.Engine.TickAsync();

        Assert.NotNull(await rig.Store.HeadAsync("clients/"));
        Assert.NotNull(await rig.Store.HeadAsync("clients/acme corp/"));

        var newHost = await StartAsync(caseInsensitive: true, bucket: rig.Bucket);
        await newHost.Engine.SyncTreeAsync("");
        Assert.Equal(["Clients", "Clients/Acme Corp"], CacheEntries(newHost));
    }

    [Fact]
    public async Task A_case_sensitive_drive_keeps_keys_as_written_and_shows_names_that_differ_only_in_case_apart()
    {
        var rig = await StartAsync(caseInsensitive: false);
        await PutRawAsync(rig, "notes.txt", "lower");
        await PutRawAsync(rig, "NOTES.txt", "upper");
        await rig.WriteAsync("Report.TXT", DriveRig.RandomBytes(100, 4));
        await rig.Engine.UploadAsync("Report.TXT");

        await ListTwiceAsync(rig, "");

        Assert.Equal(["NOTES.txt", "Report.TXT", "notes.txt"], CacheEntries(rig));
        var head = await rig.Store.HeadAsync("Report.TXT");
        Assert.NotNull(head);
        Assert.False(head.Metadata.ContainsKey(ObjectLayout.NameKey));
        Assert.Null(await rig.Store.HeadAsync("report.txt"));
        Assert.DoesNotContain(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.ErrorId == ErrorIds.ObjectNameTaken);
    }
}
