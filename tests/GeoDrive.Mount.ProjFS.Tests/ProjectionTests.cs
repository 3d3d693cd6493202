using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Projection;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>What is projected: files from the index, folders implied by their paths, placeholder ids.</summary>
public sealed class ProjectionTests
{
    private static readonly DateTimeOffset Old = new(2025, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private static readonly DateTimeOffset New = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private static FileEntry Entry(string path, DateTimeOffset time, FileState state = FileState.Stubbed) =>
        new() { Path = path, Size = 100, ModifiedUtc = time, State = state, ETag = "\"9b2cf535f27731c974343645a3985328\"" };

    private static FileEntryProjection Projection(params FileEntry[] entries) => new(
        folder => entries.Where(e => folder.Length == 0 || e.Path.StartsWith(folder + "/", StringComparison.OrdinalIgnoreCase)),
        path => path == ".geodrive" || path.StartsWith(".geodrive/", StringComparison.Ordinal));

    [Fact]
    public void A_folder_lists_its_files_and_the_folders_their_paths_imply()
    {
        var projection = Projection(Entry("Docs/a.txt", Old), Entry("Docs/Plans/b.txt", Old), Entry("Docs/Plans/c.txt", New), Entry("top.txt", Old));

        var docs = projection.List("Docs").OrderBy(i => i.Name, StringComparer.Ordinal).ToList();

        Assert.Equal(["Plans", "a.txt"], docs.Select(i => i.Name));
        Assert.True(docs[0].IsDirectory);
        Assert.Equal("Docs/Plans", docs[0].Path);
        Assert.Equal(New, docs[0].ModifiedUtc);     // a folder shows its newest file's time
        Assert.Equal(["Docs", "top.txt"], projection.List("").Select(i => i.Name).Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Names_are_found_case_insensitively_with_the_buckets_case()
    {
        var projection = Projection(Entry("Docs/Report.PDF", Old));

        Assert.Equal("Docs/Report.PDF", projection.Find("docs/report.pdf")?.Path);
        Assert.True(projection.Find("DOCS")?.IsDirectory);
        Assert.Null(projection.Find("docs/other.pdf"));
        Assert.Null(projection.Find(""));
    }

    [Fact]
    public void The_engines_folder_is_never_projected()
    {
        var projection = Projection(Entry(".geodrive/index.db", Old), Entry("a.txt", Old));

        Assert.Equal(["a.txt"], projection.List("").Select(i => i.Name));
        Assert.Null(projection.Find(".geodrive/index.db"));
    }

    [Fact]
    public void A_projected_file_is_offline_and_a_folder_is_a_directory()
    {
        var file = ProjectedItem.File(Entry("a.txt", Old));

        Assert.Equal(ProjectedItem.AttributeOffline, file.FileAttributes & ProjectedItem.AttributeOffline);
        Assert.Equal(ProjectedItem.AttributeDirectory, ProjectedItem.Folder("d", Old).FileAttributes);
    }

    [Fact]
    public void The_content_id_is_the_version_id_or_else_the_etag_without_quotes()
    {
        var entry = Entry("a.txt", Old);
        Assert.Equal("9b2cf535f27731c974343645a3985328", PlaceholderIds.Decode(ProjectedItem.File(entry).ContentId));

        entry.VersionId = "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY";
        Assert.Equal("3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", PlaceholderIds.Decode(ProjectedItem.File(entry).ContentId));
    }

    [Fact]
    public void Ids_are_cut_to_128_bytes_at_a_character_boundary()
    {
        var id = PlaceholderIds.Encode(new string('a', 127) + "é");   // é is two bytes in UTF-8

        Assert.Equal(127, id.Length);
        var padded = new byte[PlaceholderIds.Length];
        id.CopyTo(padded, 0);
        Assert.Equal(new string('a', 127), PlaceholderIds.Decode(padded));
        Assert.Equal("GeoDrive/1", PlaceholderIds.Decode(PlaceholderIds.ProviderId));
    }
}
