using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

/// <summary>
/// LiteDB 5 keeps every page a transaction reads until the transaction ends, and its page cache grows to hold them and
/// never gives the memory back: an index that read all its entries in one query held a cache as large as itself for
/// the rest of the service's life. These read a real index of 40,000 entries and watch the cache LiteDB reports.
/// </summary>
public sealed class PageCacheTests : IClassFixture<PageCacheTests.LargeIndex>, IDisposable
{
    private const int Entries = 40_000;
    private const int Dirty = Entries / 1_000;
    private const int Cached = Entries - Entries / 10 - Dirty;
    // LiteDB's first five segments (12 + 50 + 100 + 500 + 1,000 pages of 8 KiB) are 13 MiB; one query over every
    // entry took it to 21 MiB here (36,000 Cached entries' documents and index nodes).
    private const long Bound = 16L << 20;

    private readonly TempDirectory _dir = new("state-page-cache");
    private readonly LiteDbFileIndex _index;

    /// <summary>An index of <see cref="Entries"/> entries, one in ten Stubbed and 40 Dirty, written once for the class; each test opens a copy.</summary>
    public sealed class LargeIndex : IDisposable
    {
        public TempDirectory Dir { get; } = new("state-page-cache-large");

        public LargeIndex()
        {
            using var index = LiteDbFileIndex.Open(Dir.Combine(".geodrive", "index.db"));
            for (var i = 0; i < Entries; i++)
            {
                var state = i % 10 == 0 ? FileState.Stubbed : i % 1_000 == 1 ? FileState.Dirty : FileState.Cached;
                index.PutDeferred(Samples.Entry($"d{i % 100:D2}/file{i:D6}.bin", state));
            }
        }

        public void Dispose() => Dir.Dispose();
    }

    public PageCacheTests(LargeIndex large)
    {
        var folder = Directory.CreateDirectory(_dir.Combine(".geodrive"));
        foreach (var file in Directory.GetFiles(large.Dir.Combine(".geodrive")))
        {
            File.Copy(file, Path.Combine(folder.FullName, Path.GetFileName(file)));
        }
        _index = LiteDbFileIndex.Open(_dir.Combine(".geodrive", "index.db"));
        _index.KnownPathsFillEnded.Wait();
    }

    public void Dispose()
    {
        _index.Dispose();
        _dir.Dispose();
    }

    [Fact]
    public void Opening_a_large_index_counts_its_entries_without_holding_them_all_in_the_page_cache()
    {
        Assert.Equal(Cached, _index.CountByState()[FileState.Cached]);
        Assert.InRange(_index.PageCacheBytes, 0, Bound);
    }

    [Fact]
    public void A_scan_of_every_Cached_entry_visits_each_once_and_leaves_the_page_cache_small()
    {
        var visited = new HashSet<string>();
        _index.VisitByState(FileState.Cached, e => Assert.True(visited.Add(e.Path), e.Path));

        Assert.Equal(Cached, visited.Count);
        Assert.Equal(Entries, _index.DocumentsWalked);
        Assert.InRange(_index.PageCacheBytes, 0, Bound);
    }

    [Fact]
    public void Every_Stubbed_entry_found_at_once_still_leaves_the_page_cache_small()
    {
        var stubbed = _index.FindByState(FileState.Stubbed);

        Assert.Equal(Entries / 10, stubbed.Select(e => e.Path).Distinct().Count());
        Assert.All(stubbed, e => Assert.Equal(FileState.Stubbed, e.State));
        Assert.InRange(_index.PageCacheBytes, 0, Bound);
    }

    [Fact]
    public void A_few_entries_of_a_state_come_from_its_index_without_reading_every_document()
    {
        var dirty = new List<string>();
        _index.VisitByState(FileState.Dirty, e => dirty.Add(e.Path));
        var batch = _index.FindByState(FileState.Cached, limit: 512);

        Assert.Equal(Dirty, dirty.Distinct().Count());
        Assert.Equal(512, batch.Count);
        Assert.All(batch, e => Assert.Equal(FileState.Cached, e.State));
        Assert.Equal(0, _index.DocumentsWalked);
    }

    [Fact]
    public void Listing_every_entry_leaves_the_page_cache_small()
    {
        Assert.Equal(Entries, _index.All().Count());
        Assert.InRange(_index.PageCacheBytes, 0, Bound);
    }
}
