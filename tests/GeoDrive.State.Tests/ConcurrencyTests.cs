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

            // Writers start only once every reader is reading: on a busy two-core machine the
            // thread pool may otherwise run all eight writers to the end before a reader starts.
            using var readersStarted = new CountdownEvent(2);
            var readers = Enumerable.Range(0, 2).Select(reader => Task.Factory.StartNew(() =>
            {
                var reads = 0;
                do
                {
                    _ = index.FindByState(FileState.Dirty, 50);
                    _ = index.Under("w3").Take(10).Count();
                    _ = index.ReadEvents(limit: 5);
                    if (reads++ == 0)
                    {
                        readersStarted.Signal();
                    }
                }
                while (!stop.IsCancellationRequested);

                return reads;
            }, TaskCreationOptions.LongRunning)).ToArray();

            Assert.True(readersStarted.Wait(TimeSpan.FromMinutes(2)), "the readers never started");
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

            await Task.WhenAll(writers);
            await stop.CancelAsync();
            await Task.WhenAll(readers); // a reader that threw under the writers fails here

            AssertContents(index);
            Assert.Equal(Writers * PutsEach / 50, index.ReadEvents(limit: int.MaxValue).Count);
        }

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
    public async Task Reading_events_while_a_new_index_gets_its_first_event_leaves_the_index_working()
    {
        // LiteDB 5.0.20 broke (and closed the index) when a reader met the transaction creating the
        // events collection; a new drive's first event used to be that transaction. Fresh indexes each
        // round, since the race is only at a collection's creation.
        for (var round = 0; round < 20; round++)
        {
            using var index = LiteDbFileIndex.Open(_dir.Combine($"first-event-{round}", "index.db"));
            using var stop = new CancellationTokenSource();
            using var started = new CountdownEvent(2);
            var readers = Enumerable.Range(0, 2).Select(reader => Task.Run(() =>
            {
                started.Signal();
                while (!stop.IsCancellationRequested)
                {
                    _ = index.ReadEvents(limit: 5);
                }
            })).ToArray();

            started.Wait();
            var first = new DriveEvent { Kind = DriveEventKind.Service, Message = "first", TimeUtc = Samples.T0 };
            index.AppendEvent(first);
            index.Put(Samples.Entry("after-first-event"));
            await stop.CancelAsync();
            await Task.WhenAll(readers);

            Assert.Equal(1, first.Id);
            Assert.Equal([first.Id], index.ReadEvents().Select(e => e.Id));
            Assert.NotNull(index.Get("after-first-event"));
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

    [Fact]
    public async Task Get_after_renames_that_raced_writes_in_the_folder_answers_what_the_index_holds()
    {
        // Get answers recent puts from memory: a put committed while a rename moved its folder must not
        // leave its old path answered by Get (or its new one missed).
        using var index = LiteDbFileIndex.Open(_dir.Combine("index.db"));
        using var stop = new CancellationTokenSource();
        var writes = 0;
        var writers = Enumerable.Range(0, 2).Select(w => Task.Run(() =>
        {
            for (var i = 0; !stop.IsCancellationRequested; i++, Interlocked.Increment(ref writes))
            {
                var folder = i % 3 == 0 ? "b" : "a";
                var entry = Samples.Entry($"{folder}/w{w}-{i % 20:D2}", FileState.Dirty, generation: i);
                if (i % 2 == 0)
                {
                    index.PutDeferred(entry);
                }
                else
                {
                    index.Put(entry);
                }
                _ = index.Get(entry.Path);
            }
        })).ToArray();
        // On a loaded machine the writers may start late: the renames begin once they write, and go on
        // until they have written a few hundred more entries meanwhile.
        Assert.True(SpinWait.SpinUntil(() => Volatile.Read(ref writes) >= 20, TimeSpan.FromSeconds(60)), "the writers never started");
        var before = Volatile.Read(ref writes);
        for (var round = 0; round < 60 || Volatile.Read(ref writes) < before + 400; round++)
        {
            var (from, to) = round % 2 == 0 ? ("a", "b") : ("b", "a");
            index.Rename(from, to);
        }
        await stop.CancelAsync();
        await Task.WhenAll(writers);

        var held = index.All().ToDictionary(e => e.Path, e => e.Generation);
        Assert.NotEmpty(held);
        foreach (var folder in new[] { "a", "b" })
        {
            for (var w = 0; w < 2; w++)
            {
                for (var n = 0; n < 20; n++)
                {
                    var path = $"{folder}/w{w}-{n:D2}";
                    Assert.Equal(held.TryGetValue(path, out var generation) ? generation : null, index.Get(path)?.Generation);
                }
            }
        }
    }
}
