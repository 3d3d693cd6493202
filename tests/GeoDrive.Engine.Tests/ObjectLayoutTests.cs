using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Reading back what GeoDrive (or another tool) recorded on an object: what a stub made from it holds, and
/// whether it is the version a file records. Objects from other tools carry none of GeoDrive's metadata, or
/// carry it wrong.
/// </summary>
public sealed class ObjectLayoutTests
{
    private static readonly DateTimeOffset Uploaded = new(2026, 11, 20, 10, 0, 0, TimeSpan.Zero);
    private const string Sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    private static ObjectInfo Head(long size = 4, string? etag = "\"098f6bcd4621d373cade4e832627b4f6\"", params (string Key, string Value)[] metadata) =>
        new("k", size, etag, Uploaded, metadata.ToDictionary(m => m.Key, m => m.Value));

    [Fact]
    public void The_recorded_checksum_is_taken_only_when_it_is_64_hex_digits_and_is_given_in_lowercase()
    {
        Assert.Equal(Sha, ObjectLayout.RecordedChecksum(Head(metadata: (ObjectLayout.Sha256Key, Sha.ToUpperInvariant()))));
        Assert.Null(ObjectLayout.RecordedChecksum(Head(metadata: (ObjectLayout.Sha256Key, Sha[..63]))));
        Assert.Null(ObjectLayout.RecordedChecksum(Head(metadata: (ObjectLayout.Sha256Key, Sha[..63] + "g"))));
        Assert.Null(ObjectLayout.RecordedChecksum(Head()));
    }

    [Theory]
    [InlineData("Report.TXT", "report.txt", "Report.TXT")]
    [InlineData("R%C3%A9sum%C3%A9.TXT", "résumé.txt", "Résumé.TXT")]
    [InlineData("100%25 Done.md", "100% done.md", "100% Done.md")]
    [InlineData("other.txt", "report.txt", null)] // more than the case differs: the key's own name
    [InlineData("..", "..", null)]
    [InlineData("a%2Fb", "a/b", null)]
    [InlineData("bad%ZZ", "bad%zz", "bad%ZZ")] // not an escape: kept as written
    [InlineData("tab%09.txt", "tab\t.txt", null)]
    public void The_recorded_name_is_taken_only_when_it_differs_from_the_keys_name_in_case_alone(string recorded, string keyName, string? shown)
    {
        keyName = keyName.Replace("\\t", "\t", StringComparison.Ordinal);
        Assert.Equal(shown, ObjectLayout.RecordedName(Head(metadata: (ObjectLayout.NameKey, recorded)), keyName));
    }

    [Theory]
    [InlineData("Report.TXT", "Report.TXT")]
    [InlineData("Résumé Q3.TXT", "R%C3%A9sum%C3%A9 Q3.TXT")]
    [InlineData("100% Done.md", "100%25 Done.md")]
    [InlineData("日本.txt", "%E6%97%A5%E6%9C%AC.txt")]
    public void A_name_is_written_to_metadata_percent_encoded_outside_printable_ascii_and_read_back_as_written(string name, string written)
    {
        var metadata = new Dictionary<string, string>();
        ObjectLayout.AddName(metadata, "folder/" + name);

        Assert.Equal(written, metadata[ObjectLayout.NameKey]);
        Assert.Equal(name, ObjectLayout.RecordedName(Head(metadata: (ObjectLayout.NameKey, written)), name.ToLowerInvariant()));
    }

    [Fact]
    public void The_recorded_time_keeps_its_ticks_and_an_object_without_one_has_its_upload_time()
    {
        var mtime = new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero).AddTicks(1234567);
        Assert.Equal(mtime, ObjectLayout.RecordedMtime(Head(metadata: (ObjectLayout.MtimeKey, mtime.UtcDateTime.ToString("O")))));
        Assert.Equal(Uploaded, ObjectLayout.RecordedMtime(Head()));
        Assert.Equal(Uploaded, ObjectLayout.RecordedMtime(Head(metadata: (ObjectLayout.MtimeKey, "yesterday"))));
    }

    [Theory]
    [InlineData("640", "rw-r-----")]
    [InlineData("4755", "rwxr-xr-x")] // never a set-id bit from the bucket
    [InlineData("0444", "rw-r--r--")] // the owner can always write a recall back in
    [InlineData("999", "rw-r--r--")]
    [InlineData("", "rw-r--r--")]
    [InlineData("77777", "rw-r--r--")]
    public void A_recorded_mode_gives_an_unprivileged_service_permission_bits_only_and_the_owner_may_always_read_and_write(string recorded, string expected)
    {
        var mode = ObjectLayout.RecordedMode(Head(metadata: (ObjectLayout.ModeKey, recorded)), privileged: false);
        Assert.Equal(expected, Symbolic(mode));
    }

    [Theory]
    [InlineData("0444", "r--r--r--")] // root writes a recall back in whatever the mode says
    [InlineData("4755", "rwxr-xr-x")] // still never a set-id bit from the bucket
    [InlineData("600", "rw-------")]
    public void A_recorded_mode_gives_a_privileged_service_exactly_the_permission_bits(string recorded, string expected)
    {
        var mode = ObjectLayout.RecordedMode(Head(metadata: (ObjectLayout.ModeKey, recorded)), privileged: true);
        Assert.Equal(expected, Symbolic(mode));
    }

    [Fact]
    public void The_same_version_is_the_same_checksum_when_both_sides_recorded_one_else_the_same_etag()
    {
        var entry = new FileEntry { Path = "a", Size = 4, Checksum = Sha, ETag = "\"old-etag\"" };
        // Same bytes uploaded again in other parts: another ETag, the same checksum.
        Assert.True(ObjectLayout.IsSameVersion(entry, Head(etag: "\"new-etag-2\"", metadata: (ObjectLayout.Sha256Key, Sha))));
        Assert.False(ObjectLayout.IsSameVersion(entry, Head(etag: "\"old-etag\"", metadata: (ObjectLayout.Sha256Key, new string('0', 64)))));
        Assert.False(ObjectLayout.IsSameVersion(entry, Head(size: 5, etag: "\"old-etag\"")));

        var foreign = new FileEntry { Path = "b", Size = 4, ETag = "abc" };
        Assert.True(ObjectLayout.IsSameVersion(foreign, Head(etag: "\"abc\"")));
        Assert.False(ObjectLayout.IsSameVersion(foreign, Head(etag: "\"abd\"")));
    }

    [Fact]
    public void A_recall_of_another_tools_object_is_checked_by_its_md5_etag_unless_the_etag_is_a_multipart_one()
    {
        var md5 = Convert.FromHexString("098f6bcd4621d373cade4e832627b4f6");
        Assert.True(ObjectLayout.ForeignObjectMatches(new FileEntry { Path = "a", ETag = "\"098f6bcd4621d373cade4e832627b4f6\"" }, md5));
        Assert.False(ObjectLayout.ForeignObjectMatches(new FileEntry { Path = "a", ETag = "\"198f6bcd4621d373cade4e832627b4f6\"" }, md5));
        Assert.True(ObjectLayout.ForeignObjectMatches(new FileEntry { Path = "a", ETag = "\"d41d8cd98f00b204e9800998ecf8427e-3\"" }, md5));
    }

    private static string Symbolic(UnixFileMode mode)
    {
        var bits = "rwxrwxrwx";
        return new string([.. bits.Select((c, i) => ((int)mode & (1 << (8 - i))) != 0 ? c : '-')]) + (((int)mode & ~0x1FF) != 0 ? "+special" : "");
    }
}
