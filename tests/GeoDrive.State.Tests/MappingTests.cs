using System.Reflection;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

public sealed class MappingTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-map");

    public void Dispose() => _dir.Dispose();

    private string DbPath => _dir.Combine(".geodrive", "index.db");

    [Fact]
    public void Every_FileEntry_field_round_trips_exactly_across_a_reopen()
    {
        var full = Samples.Full("Finance/Q4/report.pdf");
        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            index.Put(full);
            AssertSameEntry(full, index.Get(full.Path)!);
        }

        using var reopened = LiteDbFileIndex.Open(DbPath);
        AssertSameEntry(full, reopened.Get(full.Path)!);
    }

    [Fact]
    public void The_full_sample_sets_every_FileEntry_property()
    {
        // Guards the round-trip test: a property added to FileEntry must be added to Samples.Full and
        // to Mapping/FileEntryDocument, or this fails.
        var full = Samples.Full("x");
        var blank = new FileEntry { Path = "" };
        var unset = Properties().Where(p => Equals(p.GetValue(full), p.GetValue(blank))).Select(p => p.Name).ToList();
        Assert.Empty(unset);
    }

    /// <summary>The XXH3-128 stands for the bytes the SHA-256 names: a recall never checks new bytes by an old one.</summary>
    [Fact]
    public void A_new_checksum_drops_the_XXH3_128_of_the_old_bytes_and_the_same_checksum_keeps_it()
    {
        var entry = Samples.Full("a");

        entry.Checksum = entry.Checksum;
        Assert.NotNull(entry.Xxh128);
        entry.Checksum = new string('b', 64);
        Assert.Null(entry.Xxh128);
        entry.Xxh128 = new string('c', 32);
        entry.Checksum = null;
        Assert.Null(entry.Xxh128);
    }

    [Fact]
    public void Null_optional_fields_stay_null()
    {
        var sparse = new FileEntry { Path = "new.txt", State = FileState.Dirty };
        using var index = LiteDbFileIndex.Open(DbPath);
        index.Put(sparse);
        var back = index.Get("new.txt")!;
        AssertSameEntry(sparse, back);
        Assert.Null(back.DirtySinceUtc);
        Assert.Null(back.NextAttemptUtc);
        Assert.Null(back.Checksum);
        Assert.Null(back.ObjectKey);
        Assert.Null(back.ETag);
        Assert.Null(back.VersionId);
        Assert.Null(back.LastError);
    }

    [Fact]
    public void Times_come_back_in_UTC_to_the_tick_whatever_offset_they_were_written_with()
    {
        var full = Samples.Full("t");
        using var index = LiteDbFileIndex.Open(DbPath);
        index.Put(full);
        var back = index.Get("t")!;

        Assert.Equal(full.ModifiedUtc.UtcTicks, back.ModifiedUtc.UtcTicks);
        Assert.Equal(TimeSpan.Zero, back.ModifiedUtc.Offset);
        Assert.Equal(full.LastAccessUtc.UtcTicks, back.LastAccessUtc.UtcTicks);
        Assert.Equal(full.DirtySinceUtc!.Value.UtcTicks, back.DirtySinceUtc!.Value.UtcTicks);
        Assert.Equal(full.NextAttemptUtc!.Value.UtcTicks, back.NextAttemptUtc!.Value.UtcTicks);
        Assert.Equal(TimeSpan.Zero, back.NextAttemptUtc!.Value.Offset);
    }

    [Theory]
    [InlineData(FileState.Dirty)]
    [InlineData(FileState.Uploading)]
    [InlineData(FileState.Cached)]
    [InlineData(FileState.Stubbed)]
    [InlineData(FileState.Recalling)]
    [InlineData(FileState.Excluded)]
    public void Each_state_round_trips(FileState state)
    {
        using var index = LiteDbFileIndex.Open(DbPath);
        index.Put(Samples.Entry("s", state));
        Assert.Equal(state, index.Get("s")!.State);
    }

    [Fact]
    public void States_are_stored_by_name_so_renumbering_the_enum_cannot_corrupt_the_index()
    {
        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            index.Put(Samples.Entry("n", FileState.Stubbed));
        }

        using var db = RawDatabase.Open(DbPath);
        Assert.Equal("Stubbed", db.GetCollection("files").FindById("n")["state"].AsString);
    }

    [Fact]
    public void Paths_are_case_sensitive_ids()
    {
        using var index = LiteDbFileIndex.Open(DbPath);
        index.Put(Samples.Entry("Report.pdf", FileState.Cached));
        index.Put(Samples.Entry("report.pdf", FileState.Dirty));

        Assert.Equal(2, index.Count());
        Assert.Equal(FileState.Cached, index.Get("Report.pdf")!.State);
        Assert.Equal(FileState.Dirty, index.Get("report.pdf")!.State);
        Assert.Null(index.Get("REPORT.PDF"));
    }

    internal static void AssertSameEntry(FileEntry expected, FileEntry actual)
    {
        foreach (var property in Properties())
        {
            var e = property.GetValue(expected);
            var a = property.GetValue(actual);
            if (e is DateTimeOffset eTime && a is DateTimeOffset aTime)
            {
                // DateTimeOffset equality ignores the offset; compare the instant to the tick.
                Assert.True(eTime.UtcTicks == aTime.UtcTicks, $"{property.Name}: expected {eTime:o}, got {aTime:o}");
            }
            else
            {
                Assert.True(Equals(e, a), $"{property.Name}: expected '{e}', got '{a}'");
            }
        }
    }

    private static PropertyInfo[] Properties() => typeof(FileEntry).GetProperties(BindingFlags.Public | BindingFlags.Instance);
}
