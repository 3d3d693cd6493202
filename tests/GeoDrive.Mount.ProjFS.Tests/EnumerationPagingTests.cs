using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Enumeration;
using GeoDrive.Mount.ProjFS.Projection;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>Listings in pages: a session per enumeration id, resumed after a full buffer without loss or repeat.</summary>
public sealed class EnumerationPagingTests
{
    private static readonly DateTimeOffset Time = new(2026, 1, 2, 3, 4, 5, TimeSpan.Zero);

    private static ProjectedItem File(string path) => new(path, false, 10, Time, FileState.Stubbed, "etag", null);

    private static List<ProjectedItem> Folder(params string[] names) => [.. names.Select(File)];

    /// <summary>A directory-entry buffer that holds <paramref name="capacity"/> entries, like PrjFillDirEntryBuffer.</summary>
    private sealed class Buffer(int capacity)
    {
        public List<string> Names { get; } = [];

        public bool TryAdd(ProjectedItem item)
        {
            if (Names.Count >= capacity)
            {
                return false;
            }
            Names.Add(item.Name);
            return true;
        }
    }

    private static List<string> ReadAll(EnumerationSession session, int capacity, string? expression = null)
    {
        var all = new List<string>();
        for (var call = 0; call < 1000; call++)
        {
            var buffer = new Buffer(capacity);
            var result = session.Fill(expression, restartScan: false, singleEntry: false, buffer.TryAdd);
            Assert.Equal(FillResult.Ok, result);
            if (buffer.Names.Count == 0)
            {
                return all;
            }
            all.AddRange(buffer.Names);
        }
        throw new InvalidOperationException("the listing never ended");
    }

    [Fact]
    public void Entries_come_sorted_as_ProjFS_sorts()
    {
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder("b.txt", "_x", "A.txt", "a_b", "10", "2"));

        Assert.Equal(["10", "2", "A.txt", "a_b", "b.txt", "_x"], ReadAll(session, 100));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(7)]
    public void A_full_buffer_resumes_at_the_entry_that_did_not_fit(int capacity)
    {
        var names = Enumerable.Range(0, 20).Select(i => $"f{i:00}").ToArray();
        var session = new EnumerationSession(Guid.NewGuid(), "docs", () => Folder([.. names.Select(n => "docs/" + n)]));

        Assert.Equal(names, ReadAll(session, capacity));
    }

    [Fact]
    public void Nothing_fitting_at_all_is_buffer_too_small_and_loses_nothing()
    {
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder("a", "b"));

        Assert.Equal(FillResult.BufferTooSmall, session.Fill(null, false, false, new Buffer(0).TryAdd));
        Assert.Equal(["a", "b"], ReadAll(session, 1));
    }

    [Fact]
    public void The_search_expression_of_the_first_call_holds_until_a_restart()
    {
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder("a.txt", "b.pdf", "c.txt", "d.pdf"));

        var first = new Buffer(1);
        session.Fill("*.txt", false, false, first.TryAdd);
        var second = new Buffer(10);
        session.Fill("*.pdf", false, false, second.TryAdd);   // ignored: not a restart

        Assert.Equal(["a.txt"], first.Names);
        Assert.Equal(["c.txt"], second.Names);
        Assert.Equal("*.txt", session.SearchExpression);
    }

    [Fact]
    public void A_restart_scan_starts_over_with_the_new_expression_and_a_fresh_listing()
    {
        var names = new List<string> { "a.txt", "b.pdf" };
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder([.. names]));
        ReadAll(session, 10, "*.txt");
        names.Add("c.pdf");

        var buffer = new Buffer(10);
        session.Fill("*.PDF", restartScan: true, singleEntry: false, buffer.TryAdd);

        Assert.Equal(["b.pdf", "c.pdf"], buffer.Names);
    }

    [Fact]
    public void Return_single_entry_gives_one_entry_per_call()
    {
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder("a", "b", "c"));

        var buffer = new Buffer(10);
        session.Fill(null, false, singleEntry: true, buffer.TryAdd);
        session.Fill(null, false, singleEntry: true, buffer.TryAdd);

        Assert.Equal(["a", "b"], buffer.Names);
    }

    [Fact]
    public void No_match_is_an_empty_successful_page()
    {
        var session = new EnumerationSession(Guid.NewGuid(), "", () => Folder("a.txt"));

        var buffer = new Buffer(10);
        Assert.Equal(FillResult.Ok, session.Fill("*.iso", false, false, buffer.TryAdd));
        Assert.Empty(buffer.Names);
    }

    [Fact]
    public void Sessions_are_kept_per_enumeration_id_until_ended()
    {
        var sessions = new EnumerationSessions();
        var one = Guid.NewGuid();
        var two = Guid.NewGuid();
        sessions.Start(one, "a", () => Folder("a/x"));
        sessions.Start(two, "b", () => Folder("b/y", "b/z"));

        Assert.Equal(["x"], ReadAll(sessions.Get(one)!, 1));
        Assert.Equal(["y", "z"], ReadAll(sessions.Get(two)!, 1));
        Assert.True(sessions.End(one));
        Assert.Null(sessions.Get(one));
        Assert.Equal(1, sessions.Count);
        Assert.False(sessions.End(one));
    }
}
