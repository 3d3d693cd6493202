using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

public sealed class FileIndexTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-index");
    private readonly LiteDbFileIndex _index;

    public FileIndexTests()
    {
        _index = LiteDbFileIndex.Open(_dir.Combine(".geodrive", "index.db"));
    }

    public void Dispose()
    {
        _index.Dispose();
        _dir.Dispose();
    }

    private void PutAll(params string[] paths)
    {
        foreach (var path in paths)
        {
            _index.Put(Samples.Entry(path));
        }
    }

    private List<string> PathsUnder(string folder) => _index.Under(folder).Select(e => e.Path).ToList();

    [Fact]
    public void Constructor_creates_the_folder_and_Get_of_a_missing_path_is_null()
    {
        Assert.True(File.Exists(_dir.Combine(".geodrive", "index.db")));
        Assert.Null(_index.Get("nothing"));
        Assert.Equal(0, _index.Count());
    }

    [Fact]
    public void CountByState_counts_every_state_and_follows_changes()
    {
        _index.Put(Samples.Entry("a", FileState.Dirty));
        _index.Put(Samples.Entry("b", FileState.Dirty));
        _index.Put(Samples.Entry("c", FileState.Stubbed));
        _index.Put(Samples.Entry("a", FileState.Cached, generation: 2));

        var counts = _index.CountByState();

        Assert.Equal(Enum.GetValues<FileState>().Length, counts.Count);
        Assert.Equal((1L, 1L, 1L, 0L), (counts[FileState.Dirty], counts[FileState.Cached], counts[FileState.Stubbed], counts[FileState.Uploading]));
    }

    [Fact]
    public void Put_replaces_an_existing_entry()
    {
        _index.Put(Samples.Entry("a.txt", FileState.Dirty, generation: 1));
        _index.Put(Samples.Entry("a.txt", FileState.Cached, generation: 2));

        Assert.Equal(1, _index.Count());
        Assert.Equal(FileState.Cached, _index.Get("a.txt")!.State);
        Assert.Equal(2, _index.Get("a.txt")!.Generation);
    }

    [Fact]
    public void Delete_removes_and_reports_whether_there_was_an_entry()
    {
        PutAll("a.txt", "b.txt");

        Assert.True(_index.Delete("a.txt"));
        Assert.False(_index.Delete("a.txt"));
        Assert.Null(_index.Get("a.txt"));
        Assert.Equal(1, _index.Count());
    }

    [Fact]
    public void FindByState_returns_only_that_state_up_to_the_limit()
    {
        for (var i = 0; i < 10; i++)
        {
            _index.Put(Samples.Entry($"d{i}", FileState.Dirty));
            _index.Put(Samples.Entry($"c{i}", FileState.Cached));
        }

        _index.Put(Samples.Entry("c0", FileState.Stubbed)); // a state change leaves the old state's index

        Assert.Equal(10, _index.FindByState(FileState.Dirty).Count);
        Assert.All(_index.FindByState(FileState.Dirty), e => Assert.Equal(FileState.Dirty, e.State));
        Assert.Equal(9, _index.FindByState(FileState.Cached).Count);
        Assert.Equal("c0", Assert.Single(_index.FindByState(FileState.Stubbed)).Path);
        Assert.Equal(3, _index.FindByState(FileState.Dirty, limit: 3).Count);
        Assert.Empty(_index.FindByState(FileState.Dirty, limit: 0));
        Assert.Empty(_index.FindByState(FileState.Uploading));
    }

    [Fact]
    public void VisitByState_visits_every_entry_in_that_state_once_and_nothing_else()
    {
        for (var i = 0; i < 2_500; i++)
        {
            _index.Put(Samples.Entry($"f/c{i:D4}", i % 5 == 0 ? FileState.Stubbed : FileState.Cached));
        }
        _index.PutDeferred(Samples.Entry("f/c0001", FileState.Dirty)); // not yet committed: visited in its new state

        var visited = new List<FileEntry>();
        _index.VisitByState(FileState.Cached, visited.Add);

        Assert.Equal(1_999, visited.Count);
        Assert.All(visited, e => Assert.Equal(FileState.Cached, e.State));
        Assert.Equal(visited.Count, visited.Select(e => e.Path).Distinct().Count());
        Assert.DoesNotContain(visited, e => e.Path == "f/c0001");
        var dirty = new List<string>();
        _index.VisitByState(FileState.Dirty, e => dirty.Add(e.Path));
        Assert.Equal(["f/c0001"], dirty);
    }

    [Fact]
    public void Under_matches_the_folder_prefix_plus_slash_only()
    {
        PutAll("a", "a/1", "a/b/2", "a/b/c/3", "ab/x", "a0", "a.txt", "A/4", "b/5");

        Assert.Equal(["a/1", "a/b/2", "a/b/c/3"], PathsUnder("a"));
        Assert.Equal(["a/1", "a/b/2", "a/b/c/3"], PathsUnder("a/"));
        Assert.Equal(["a/b/2", "a/b/c/3"], PathsUnder("a/b"));
        Assert.Equal(["A/4"], PathsUnder("A"));
        Assert.Empty(PathsUnder("a/1"));
        Assert.Empty(PathsUnder("zzz"));
    }

    [Fact]
    public void Under_treats_LIKE_wildcards_in_names_literally()
    {
        PutAll("a_b/1", "aXb/2", "50%/3", "50XY/4");

        Assert.Equal(["a_b/1"], PathsUnder("a_b"));
        Assert.Equal(["50%/3"], PathsUnder("50%"));
    }

    [Fact]
    public void Under_the_root_and_All_return_every_entry_in_path_order_across_pages()
    {
        // More than one read page (1,000) inside and around the folder.
        var paths = Enumerable.Range(0, 1_200).Select(i => $"big/{i:D5}")
            .Concat(Enumerable.Range(0, 900).Select(i => $"bif/{i:D5}"))
            .Concat(Enumerable.Range(0, 900).Select(i => $"bih/{i:D5}"))
            .ToArray();
        PutAll(paths);

        var expected = paths.Order(StringComparer.Ordinal).ToList();
        Assert.Equal(expected, PathsUnder(""));
        Assert.Equal(expected, _index.All().Select(e => e.Path).ToList());
        Assert.Equal(paths.Where(p => p.StartsWith("big/", StringComparison.Ordinal)).ToList(), PathsUnder("big"));
        Assert.Equal(3_000, _index.Count());
    }

    [Fact]
    public void Writing_while_enumerating_is_safe()
    {
        PutAll(Enumerable.Range(0, 2_500).Select(i => $"w/{i:D5}").ToArray());

        var seen = 0;
        foreach (var entry in _index.Under("w"))
        {
            entry.State = FileState.Stubbed;
            _index.Put(entry);
            seen++;
        }

        Assert.Equal(2_500, seen);
        Assert.Equal(2_500, _index.FindByState(FileState.Stubbed).Count);
    }

    [Fact]
    public void Rename_of_a_file_moves_its_entry_with_every_field()
    {
        var full = Samples.Full("docs/old.pdf");
        _index.Put(full);

        Assert.Equal(1, _index.Rename("docs/old.pdf", "docs/new.pdf"));

        Assert.Null(_index.Get("docs/old.pdf"));
        full.Path = "docs/new.pdf";
        MappingTests.AssertSameEntry(full, _index.Get("docs/new.pdf")!);
    }

    [Fact]
    public void Rename_of_a_folder_moves_every_nested_entry_and_nothing_beside_it()
    {
        PutAll("a", "a/1", "a/b/2", "a/b/c/3", "ab/x", "a0", "a.txt");

        Assert.Equal(4, _index.Rename("a", "z/y"));

        Assert.Equal(["a.txt", "a0", "ab/x", "z/y", "z/y/1", "z/y/b/2", "z/y/b/c/3"], PathsUnder(""));
    }

    [Fact]
    public void Rename_of_a_folder_without_an_entry_of_its_own_moves_its_children()
    {
        PutAll("p/1", "p/q/2");

        Assert.Equal(2, _index.Rename("p", "r"));
        Assert.Equal(["r/1", "r/q/2"], PathsUnder(""));
    }

    [Fact]
    public void Rename_does_not_lose_entries_whose_new_names_are_other_entries_old_names()
    {
        // Renaming "a/b" to "a" moves "a/b/b/x" onto "a/b/x", which itself moves to "a/x".
        _index.Put(Samples.Entry("a/b", generation: 1));
        _index.Put(Samples.Entry("a/b/x", generation: 3));
        _index.Put(Samples.Entry("a/b/b/x", generation: 7));

        Assert.Equal(3, _index.Rename("a/b", "a"));

        Assert.Equal(["a", "a/b/x", "a/x"], PathsUnder(""));
        Assert.Equal(1, _index.Get("a")!.Generation);
        Assert.Equal(7, _index.Get("a/b/x")!.Generation);
        Assert.Equal(3, _index.Get("a/x")!.Generation);
    }

    [Fact]
    public void Rename_replaces_an_entry_at_the_target_name()
    {
        _index.Put(Samples.Entry("src", generation: 1));
        _index.Put(Samples.Entry("dst", generation: 2));

        Assert.Equal(1, _index.Rename("src", "dst"));
        Assert.Equal(1, _index.Count());
        Assert.Equal(1, _index.Get("dst")!.Generation);
    }

    [Fact]
    public void Rename_of_a_missing_path_or_onto_itself_moves_nothing()
    {
        PutAll("x");

        Assert.Equal(0, _index.Rename("missing", "other"));
        Assert.Equal(0, _index.Rename("x", "x"));
        Assert.NotNull(_index.Get("x"));
    }

    [Fact]
    public void Rename_into_itself_is_refused()
    {
        PutAll("a/1");

        Assert.Throws<ArgumentException>(() => _index.Rename("a", "a/sub"));
        Assert.NotNull(_index.Get("a/1"));
    }

    [Fact]
    public void Put_refuses_an_empty_path()
    {
        Assert.Throws<ArgumentException>(() => _index.Put(new FileEntry { Path = "" }));
    }
}
