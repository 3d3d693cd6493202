using GeoDrive.Core.Model;
using GeoDrive.State.Lookup;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.State.Tests;

/// <summary>
/// The index answers for a path it cannot hold without a LiteDB read, from a filter of known paths. A filter may
/// say "maybe" for a path that is not there (LiteDB is asked), never "no" for one that is: a Get that missed an
/// entry would make an existing file look new. GEODRIVE_INDEX_SEED replays the random sequence.
/// </summary>
public sealed class KnownPathsTests(ITestOutputHelper output) : IDisposable
{
    private readonly TempDirectory _dir = new("state-known");

    public void Dispose() => _dir.Dispose();

    private string DatabasePath => _dir.Combine(".geodrive", "index.db");

    [Fact]
    public void A_filter_finds_every_path_added_and_says_maybe_for_few_others()
    {
        var filter = new PathFilter(capacity: 50_000);
        var added = Enumerable.Range(0, 50_000).Select(i => $"projects/{i % 97}/scan ñ {i}.tif").ToList();
        foreach (var path in added)
        {
            filter.Add(path);
        }

        Assert.All(added, path => Assert.True(filter.MayContain(path), path));
        var maybes = Enumerable.Range(0, 50_000).Count(i => filter.MayContain($"projects/{i % 97}/scan ñ {i}.tiff"));
        Assert.True(maybes < 500, $"{maybes} of 50,000 paths never added were 'maybe' (sized for 0.24 %)");
        Assert.False(filter.Overfull);
        // Counted as added: paths that set a bit (a few of the 50,000 found all theirs set by others).
        for (var i = 0; i < 1_000 && !filter.Overfull; i++)
        {
            filter.Add($"more/{i}");
        }
        Assert.True(filter.Overfull);
    }

    [Fact]
    public void Until_a_filter_is_filled_every_path_may_be_held_and_a_path_added_during_a_fill_is_in_the_filled_filter()
    {
        var known = new KnownPaths(smallestCapacity: 100);
        Assert.True(known.MayHold("anything"));
        Assert.True(known.FillDue);

        var filling = known.StartFill(entries: 10)!;
        Assert.Equal(100, filling.Capacity);
        Assert.Null(known.StartFill(entries: 10));
        filling.Add("read by the fill");
        known.Adding("written during the fill");
        Assert.True(known.MayHold("not there"));
        Assert.False(known.FillEnded.IsCompleted);

        known.Filled(filling);
        Assert.True(known.FillEnded.IsCompleted);
        Assert.True(known.MayHold("read by the fill"));
        Assert.True(known.MayHold("written during the fill"));
        Assert.False(known.MayHold("not there"));
        Assert.False(known.FillDue);
    }

    [Fact]
    public void An_overfull_filter_is_filled_again_twice_as_large_and_an_abandoned_fill_leaves_the_one_in_use()
    {
        var known = new KnownPaths(smallestCapacity: 100);
        var first = known.StartFill(entries: 0)!;
        known.Filled(first);
        for (var i = 0; i <= first.Capacity; i++)
        {
            known.Adding($"f{i}");
        }
        Assert.True(known.FillDue);

        var abandoned = known.StartFill(entries: 150)!;
        Assert.Equal(300, abandoned.Capacity);
        known.FillAbandoned(abandoned);
        Assert.True(known.FillEnded.IsCompleted);
        Assert.True(known.MayHold("f7"));
        Assert.False(known.MayHold("never written"));

        Assert.Equal(300, known.StartFill(entries: 150)!.Capacity);
    }

    [Fact]
    public async Task Get_answers_as_a_model_does_while_filters_are_filled_and_refilled_under_random_writes()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("GEODRIVE_INDEX_SEED"), out var s) ? s : Random.Shared.Next();
        output.WriteLine($"seed {seed} (replay: GEODRIVE_INDEX_SEED={seed})");
        var random = new Random(seed);
        var model = new Dictionary<string, FileState>(StringComparer.Ordinal);
        var states = Enum.GetValues<FileState>();
        // Small filters, so that they overfill and are filled again (with the fill racing the writes) many times.
        var options = new LiteDbFileIndexOptions { KnownPathsCapacity = 64 };
        string Folder() => $"d{random.Next(6)}";
        string File() => $"{Folder()}/f{random.Next(400)}";

        using (var seeded = LiteDbFileIndex.Open(DatabasePath, options))
        {
            // Enough entries for a fill of several pages at the next open.
            for (var i = 0; i < 3_000; i++)
            {
                var path = $"d{i % 6}/seeded{i}";
                seeded.PutDeferred(Samples.Entry(path));
                model[path] = FileState.Cached;
            }
        }
        using var index = LiteDbFileIndex.Open(DatabasePath, options);
        for (var op = 1; op <= 1_500; op++)
        {
            var where = $"seed {seed}, operation {op}";
            switch (random.Next(10))
            {
                case < 3:
                    {
                        var (path, state) = (File(), states[random.Next(states.Length)]);
                        index.Put(Samples.Entry(path, state));
                        model[path] = state;
                        break;
                    }
                case < 6:
                    {
                        var (path, state) = (File(), states[random.Next(states.Length)]);
                        index.PutDeferred(Samples.Entry(path, state));
                        model[path] = state;
                        break;
                    }
                case < 8:
                    {
                        var path = File();
                        Assert.True(model.Remove(path) == index.Delete(path), where);
                        break;
                    }
                default:
                    {
                        var folder = random.Next(2) == 0;
                        var (from, to) = folder ? (Folder(), Folder()) : (File(), File());
                        if (from != to)
                        {
                            index.Rename(from, to);
                            IndexModel.Rename(model, from, to);
                        }
                        break;
                    }
            }
            var asked = random.Next(2) == 0 && model.Count > 0 ? model.Keys.ElementAt(random.Next(model.Count)) : File();
            Assert.True(model.TryGetValue(asked, out var expected) ? index.Get(asked)?.State == expected : index.Get(asked) is null, $"{where}: Get('{asked}')");
        }

        await index.KnownPathsFillEnded;
        Assert.All(model, pair => Assert.Equal(pair.Value, index.Get(pair.Key)?.State));
        Assert.All(model.Keys, path => Assert.True(index.MayHold(path), $"seed {seed}: '{path}' held but filtered out"));
        var filteredOut = Enumerable.Range(0, 1_000).Count(i => !index.MayHold($"new/file{i}"));
        Assert.True(filteredOut > 900, $"only {filteredOut} of 1,000 new names answered without a LiteDB read");
    }
}
