using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// What renames leave in the bucket, on its own (the renames themselves are ServerSideRenameTests'): a hold on
/// a key lasts while the index says the renamed file still stands for it, and no longer.
/// </summary>
public sealed class RenamedKeysTests
{
    private readonly Dictionary<string, FileEntry> _index = new(StringComparer.Ordinal);

    private RenamedKeys Keys() => new(path => _index.GetValueOrDefault(path), path => "drive/" + path);

    private FileEntry Entry(string path, FileState state, string key)
    {
        var entry = new FileEntry { Path = path, State = state, ObjectKey = key };
        _index[path] = entry;
        return entry;
    }

    [Fact]
    public void A_stub_renamed_away_holds_its_old_key_until_its_copy_is_recorded()
    {
        var keys = Keys();
        var stub = Entry("new.bin", FileState.Stubbed, "drive/old.bin");

        keys.Track(stub);
        Assert.True(keys.IsHeld("drive/old.bin"));
        Assert.Equal("new.bin", keys.HolderOf("drive/old.bin"));
        Assert.True(keys.IsStillNeeded("drive/old.bin"));

        // Copied and recorded: the engine releases the old key.
        stub.ObjectKey = "drive/new.bin";
        keys.Release("drive/old.bin", "new.bin");
        Assert.False(keys.IsHeld("drive/old.bin"));
    }

    [Fact]
    public void A_stub_renamed_back_to_its_own_name_holds_nothing()
    {
        var keys = Keys();
        keys.Track(Entry("b.bin", FileState.Stubbed, "drive/a.bin"));
        _index.Remove("b.bin");

        keys.Track(Entry("a.bin", FileState.Stubbed, "drive/a.bin"));

        Assert.False(keys.IsHeld("drive/a.bin"));
    }

    [Theory]
    [InlineData("deleted")]
    [InlineData("uploaded anew")]
    [InlineData("Dirty")]
    public void A_hold_the_index_no_longer_backs_is_dropped_when_asked_so_the_old_key_can_go(string what)
    {
        var keys = Keys();
        keys.Track(Entry("new.bin", FileState.Stubbed, "drive/old.bin"));

        switch (what)
        {
            case "deleted":
                _index.Remove("new.bin");
                break;
            case "uploaded anew":
                _index["new.bin"].ObjectKey = "drive/new.bin";
                break;
            default:
                _index["new.bin"].State = FileState.Dirty;
                break;
        }

        Assert.False(keys.IsStillNeeded("drive/old.bin"));
        Assert.False(keys.IsHeld("drive/old.bin"));
    }

    [Fact]
    public void Releasing_a_key_for_one_path_leaves_another_paths_hold_of_it()
    {
        var keys = Keys();
        keys.Track(Entry("b.bin", FileState.Stubbed, "drive/a.bin"));
        // The hold moved on to c.bin (renamed again) before b.bin's recall ended.
        keys.Track(Entry("c.bin", FileState.Stubbed, "drive/a.bin"));

        keys.Release("drive/a.bin", "b.bin");

        Assert.Equal("c.bin", keys.HolderOf("drive/a.bin"));
    }

    private void MoveEntry(string from, string to)
    {
        var entry = _index[from];
        _index.Remove(from);
        entry.Path = to;
        _index[to] = entry;
    }

    [Fact]
    public void A_hold_moves_with_its_file_and_with_the_folders_it_is_in_and_no_other()
    {
        var keys = Keys();
        keys.Track(Entry("b.bin", FileState.Stubbed, "drive/a.bin"));
        keys.Track(Entry("docs/old/x.bin", FileState.Stubbed, "drive/x.bin"));
        keys.Track(Entry("docsy/y.bin", FileState.Stubbed, "drive/y.bin"));

        Assert.Equal(1, keys.Moving("b.bin", "c.bin", isDirectory: false, () =>
        {
            MoveEntry("b.bin", "c.bin");
            return 1;
        }));
        keys.Moving("docs", "r", isDirectory: true, () =>
        {
            MoveEntry("docs/old/x.bin", "r/old/x.bin");
            return 1;
        });

        Assert.Equal("c.bin", keys.HolderOf("drive/a.bin"));
        Assert.Equal("r/old/x.bin", keys.HolderOf("drive/x.bin"));
        Assert.Equal("docsy/y.bin", keys.HolderOf("drive/y.bin"));
        Assert.True(keys.IsStillNeeded("drive/a.bin"));
        Assert.True(keys.IsStillNeeded("drive/x.bin"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_hold_is_still_needed_while_its_file_is_renamed_between_the_index_and_the_hold(bool folder)
    {
        var keys = Keys();
        var (from, to) = folder ? ("docs/b.bin", "r/b.bin") : ("b.bin", "c.bin");
        keys.Track(Entry(from, FileState.Stubbed, "drive/a.bin"));

        bool? neededMeanwhile = null;
        keys.Moving(folder ? "docs" : from, folder ? "r" : to, folder, () =>
        {
            MoveEntry(from, to);
            // An owed delete of the key asks now: the entry has left the old name, the hold is still there.
            neededMeanwhile = keys.IsStillNeeded("drive/a.bin");
            return 1;
        });

        Assert.True(neededMeanwhile);
        Assert.Equal(to, keys.HolderOf("drive/a.bin"));
        Assert.True(keys.IsStillNeeded("drive/a.bin"));
    }

    [Fact]
    public void Keys_left_behind_are_found_by_key_and_under_a_folders_prefix_until_forgotten()
    {
        var keys = Keys();
        keys.Left("drive/docs/a.txt", null);
        keys.Left(null, "\"e1\"");

        Assert.True(keys.WasLeft("drive/docs/a.txt"));
        Assert.True(keys.AnyLeftUnder("drive/docs/"));
        Assert.False(keys.AnyLeftUnder("drive/doc2/"));

        keys.Forget("drive/docs/a.txt");
        Assert.False(keys.WasLeft("drive/docs/a.txt"));
        Assert.False(keys.AnyLeftUnder("drive/docs/"));
    }

    [Fact]
    public void The_version_a_rename_left_or_replaced_under_a_key_is_remembered_after_the_key_is_forgotten_until_it_is_replaced_or_deleted()
    {
        var keys = Keys();
        keys.Left("drive/a.bin", "\"v1\"");
        keys.Left("drive/b.bin", null);

        // A file lives under the key again (its delete is no longer owed): its upload may still replace that version.
        keys.Forget("drive/a.bin");
        Assert.Equal("\"v1\"", keys.LeftVersion("drive/a.bin"));
        Assert.Null(keys.LeftVersion("drive/b.bin"));

        keys.VersionGone("drive/a.bin");
        Assert.Null(keys.LeftVersion("drive/a.bin"));

        // A file replaced by a rename onto its name: its version may be replaced, and its key is no tombstone.
        keys.ReplacedAt("drive/c.bin", "\"v3\"");
        Assert.Equal("\"v3\"", keys.LeftVersion("drive/c.bin"));
        Assert.False(keys.WasLeft("drive/c.bin"));
    }

    [Fact]
    public void Stubs_to_bring_home_are_listed_until_they_came_home()
    {
        var keys = Keys();
        keys.BringHome("local/a.bin");
        keys.BringHome("local/b.bin");
        keys.BringHome("local/a.bin");

        Assert.Equal(["local/a.bin", "local/b.bin"], keys.ComingHome.Order(StringComparer.Ordinal));
        keys.CameHome("local/a.bin");
        Assert.Equal(["local/b.bin"], keys.ComingHome);
    }
}
