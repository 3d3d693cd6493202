using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

public sealed class ConcurrencyTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-conc");

    public void Dispose() => _dir.Dispose();

    [Fact]
    public async Task Parallel_writers_and_readers_end_with_every_entry_intact()
    {
        const int Writers = 8;
        const int PutsEach = 500;
        var dbPath = _dir.Combine("index.db");
        using (var index = LiteDbFileIndex.Open(dbPath))
        {
            using var stop = new CancellationTokenSource();
            var readers = Enumerable.Range(0, 2).Select(reader => Task.Run(() =>
            {
                var reads = 0;
                while (!stop.IsCancellationRequested)
                {
                    _ = index.FindByState(FileState.Dirty, 50);
                    _ = index.Under("w3").Take(10).Count();
                    _ = index.ReadEvents(limit: 5);
                    reads++;
                }

                return reads;
            })).ToArray();

            var writers = Enumerable.Range(0, Writers).Select(w => Task.Run(() =>
            {
                for (var i = 0; i < PutsEach; i++)
                {
                    var path = $"w{w}/{i:D4}";
                    index.Put(Samples.Entry(path, FileState.Dirty, generation: i));
                    if (i % 5 == 0)
                    {
                        index.Put(Samples.Entry(path, FileState.Cached, generation: i + 1)); // overwrite under load
                    }

                    if (i % 50 == 0)
                    {
                        index.AppendEvent(new DriveEvent { Kind = DriveEventKind.Upload, Path = path, TimeUtc = Samples.T0 });
                    }
                }
            })).ToArray();

            var sw = System.Diagnostics.Stopwatch.StartNew();
            await Task.WhenAll(writers);
            File.AppendAllText("/tmp/state-dbg.txt", $"DEBUG writers {sw.Elapsed}\n");
            await stop.CancelAsync();
            Assert.All(await Task.WhenAll(readers), reads => Assert.True(reads > 0));

            File.AppendAllText("/tmp/state-dbg.txt", $"DEBUG readers {sw.Elapsed}\n");
            AssertContents(index);
            Assert.Equal(Writers * PutsEach / 50, index.ReadEvents(limit: int.MaxValue).Count);
        }

        File.AppendAllText("/tmp/state-dbg.txt", $"DEBUG disposed\n");
        using var reopened = LiteDbFileIndex.Open(dbPath);
        AssertContents(reopened);

        static void AssertContents(LiteDbFileIndex index)
        {
            Assert.Equal(Writers * PutsEach, index.Count());
            Assert.Equal(Writers * PutsEach / 5, index.FindByState(FileState.Cached).Count);
            for (var w = 0; w < Writers; w++)
            {
                var entries = index.Under($"w{w}").ToList();
                Assert.Equal(PutsEach, entries.Count);
                for (var i = 0; i < PutsEach; i++)
                {
                    Assert.Equal($"w{w}/{i:D4}", entries[i].Path);
                    Assert.Equal(i % 5 == 0 ? i + 1 : i, entries[i].Generation);
                }
            }
        }
    }

    [Fact]
    public async Task Parallel_renames_of_different_folders_keep_every_entry()
    {
        using var index = LiteDbFileIndex.Open(_dir.Combine("index.db"));
        for (var f = 0; f < 4; f++)
        {
            for (var i = 0; i < 50; i++)
            {
                index.Put(Samples.Entry($"f{f}/{i:D2}"));
            }
        }

        await Task.WhenAll(Enumerable.Range(0, 4).Select(f => Task.Run(() =>
        {
            for (var round = 0; round < 20; round++)
            {
                var (from, to) = round % 2 == 0 ? ($"f{f}", $"g{f}") : ($"g{f}", $"f{f}");
                Assert.Equal(50, index.Rename(from, to));
            }
        })));

        Assert.Equal(200, index.Count());
        for (var f = 0; f < 4; f++)
        {
            Assert.Equal(50, index.Under($"f{f}").Count());
        }
    }
}
