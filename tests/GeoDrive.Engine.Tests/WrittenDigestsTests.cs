using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

/// <summary>Checksums taken as files were written are held for one change of one file as it then was.</summary>
public sealed class WrittenDigestsTests
{
    private static readonly DateTimeOffset Time = new(2026, 11, 29, 12, 0, 0, TimeSpan.Zero);
    private static readonly LocalFile File100 = new(100, Time, UnixFileMode.UserRead | UnixFileMode.UserWrite);
    private static readonly WrittenDigest Digest100 = new(100, new string('a', 64), new string('b', 32));

    [Fact]
    public void Held_checksums_are_given_for_the_same_generation_and_file_only()
    {
        var digests = new WrittenDigests();
        digests.Hold("a.bin", Digest100, generation: 3, File100);

        Assert.Equal(Digest100, digests.For("a.bin", 3, File100));
        Assert.Equal(Digest100, digests.For("a.bin", 3, File100));
        Assert.Null(digests.For("b.bin", 3, File100));
        // Changed since (a later close, or bytes that went round the mount): never given again.
        Assert.Null(digests.For("a.bin", 3, File100 with { ModifiedUtc = Time.AddTicks(1) }));
        Assert.Null(digests.For("a.bin", 3, File100));
    }

    [Fact]
    public void A_later_generation_does_not_take_an_earlier_changes_checksums()
    {
        var digests = new WrittenDigests();
        digests.Hold("a.bin", Digest100, generation: 3, File100);

        Assert.Null(digests.For("a.bin", 4, File100));
        Assert.Equal(0, digests.Count);
    }

    [Fact]
    public void Checksums_of_another_length_than_the_files_are_not_held()
    {
        var digests = new WrittenDigests();
        digests.Hold("a.bin", Digest100, generation: 3, File100);

        digests.Hold("a.bin", Digest100, generation: 4, File100 with { Size = 101 });

        Assert.Null(digests.For("a.bin", 4, File100 with { Size = 101 }));
        Assert.Null(digests.For("a.bin", 3, File100));
    }

    [Fact]
    public void Forgetting_a_folder_forgets_every_file_under_it_and_nothing_beside_it()
    {
        var digests = new WrittenDigests();
        digests.Hold("Media/a.bin", Digest100, 1, File100);
        digests.Hold("Media/Sub/b.bin", Digest100, 1, File100);
        digests.Hold("Media2/c.bin", Digest100, 1, File100);

        digests.ForgetAt("Media");

        Assert.Null(digests.For("Media/a.bin", 1, File100));
        Assert.Null(digests.For("Media/Sub/b.bin", 1, File100));
        Assert.Equal(Digest100, digests.For("Media2/c.bin", 1, File100));
    }

    [Fact]
    public void A_renamed_file_takes_its_checksums_along_when_it_moved_unchanged()
    {
        var digests = new WrittenDigests();
        digests.Hold("film.part", Digest100, 5, File100);

        var held = digests.Take("film.part");
        Assert.NotNull(held);
        digests.HoldRenamed("film.mkv", held.Value, movedAt: 5, generation: 6, File100);

        Assert.Null(digests.For("film.part", 5, File100));
        Assert.Equal(Digest100, digests.For("film.mkv", 6, File100));

        // Moved at another generation, or no longer as it was: not carried.
        digests.HoldRenamed("other.mkv", held.Value, movedAt: 6, generation: 7, File100);
        digests.HoldRenamed("third.mkv", held.Value, movedAt: 5, generation: 6, File100 with { Size = 99 });
        Assert.Null(digests.For("other.mkv", 7, File100));
        Assert.Null(digests.For("third.mkv", 6, File100 with { Size = 99 }));
    }

    [Fact]
    public void It_holds_at_most_its_capacity_and_a_new_file_is_always_held()
    {
        var digests = new WrittenDigests();
        for (var i = 0; i < WrittenDigests.Capacity + 10; i++)
        {
            digests.Hold($"f{i}.bin", Digest100, 1, File100);
        }

        Assert.Equal(WrittenDigests.Capacity, digests.Count);
        Assert.Equal(Digest100, digests.For($"f{WrittenDigests.Capacity + 9}.bin", 1, File100));
    }

    [Fact]
    public void A_new_time_or_mode_keeps_them_for_the_file_as_it_now_is_and_a_new_size_does_not()
    {
        var digests = new WrittenDigests();
        digests.Hold("a.bin", Digest100, 1, File100);
        var touched = File100 with { ModifiedUtc = Time.AddDays(-3), Mode = UnixFileMode.UserRead };

        digests.Restamp("a.bin", touched);

        Assert.Equal(Digest100, digests.For("a.bin", 1, touched));
        digests.Restamp("a.bin", touched with { Size = 5 });
        Assert.False(digests.Holds("a.bin"));
    }
}
