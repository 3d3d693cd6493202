using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

/// <summary>
/// PutDeferred: what the mount's create and close record without waiting for the disk. Every reader
/// sees it at once, later writes of the same path win in call order, and it is on disk with the next
/// durable write (or at Dispose).
/// </summary>
public sealed class DeferredPutTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-deferred");
    private LiteDbFileIndex _index;

    public DeferredPutTests()
    {
        _index = LiteDbFileIndex.Open(DbPath);
    }

    private string DbPath => _dir.Combine(".geodrive", "index.db");

    public void Dispose()
    {
        _index.Dispose();
        _dir.Dispose();
    }

    private void Reopen()
    {
        _index.Dispose();
        _index = LiteDbFileIndex.Open(DbPath);
    }

    [Fact]
    public void A_deferred_put_is_seen_at_once_by_Get_listings_and_counts()
    {
        _index.Put(Samples.Entry("docs/old.txt"));
        _index.PutDeferred(Samples.Entry("docs/new.txt", FileState.Dirty, generation: 7));

        Assert.Equal(7, _index.Get("docs/new.txt")!.Generation);
        Assert.Equal(["docs/new.txt", "docs/old.txt"], _index.Under("docs").Select(e => e.Path));
        Assert.Equal("docs/new.txt", Assert.Single(_index.FindByState(FileState.Dirty)).Path);
        Assert.Equal(1, _index.CountByState()[FileState.Dirty]);
        Assert.Equal(2, _index.Count());
    }

    [Fact]
    public void Get_returns_a_copy_so_a_caller_changing_its_entry_changes_nothing_until_it_puts()
    {
        _index.PutDeferred(Samples.Entry("a.txt", FileState.Dirty));
        var first = _index.Get("a.txt")!;
        first.State = FileState.Cached;

        Assert.Equal(FileState.Dirty, _index.Get("a.txt")!.State);
    }

    [Fact]
    public void Writes_of_one_path_take_effect_in_call_order_whichever_kind_they_are()
    {
        _index.PutDeferred(Samples.Entry("deferred-then-durable", generation: 1));
        _index.Put(Samples.Entry("deferred-then-durable", generation: 2));
        _index.Put(Samples.Entry("durable-then-deferred", generation: 1));
        _index.PutDeferred(Samples.Entry("durable-then-deferred", generation: 2));
        _index.PutDeferred(Samples.Entry("deferred-then-deleted", generation: 1));
        _index.Delete("deferred-then-deleted");

        Assert.Equal(2, _index.Get("deferred-then-durable")!.Generation);
        Assert.Equal(2, _index.Get("durable-then-deferred")!.Generation);
        Assert.Null(_index.Get("deferred-then-deleted"));

        Reopen();
        Assert.Equal(2, _index.Get("deferred-then-durable")!.Generation);
        Assert.Equal(2, _index.Get("durable-then-deferred")!.Generation);
        Assert.Null(_index.Get("deferred-then-deleted"));
    }

    [Fact]
    public void A_folder_rename_moves_deferred_entries_with_the_rest()
    {
        _index.Put(Samples.Entry("a/durable.txt"));
        _index.PutDeferred(Samples.Entry("a/deferred.txt", FileState.Dirty));

        Assert.Equal(2, _index.Rename("a", "b"));

        Assert.Null(_index.Get("a/deferred.txt"));
        Assert.Equal(FileState.Dirty, _index.Get("b/deferred.txt")!.State);
        Reopen();
        Assert.Equal(["b/deferred.txt", "b/durable.txt"], _index.All().Select(e => e.Path));
    }

    [Fact]
    public void Many_threads_deferring_at_once_lose_nothing_and_Dispose_writes_them_all()
    {
        const int Threads = 8;
        const int PerThread = 250;
        Parallel.For(0, Threads, new ParallelOptions { MaxDegreeOfParallelism = Threads }, t =>
        {
            for (var i = 0; i < PerThread; i++)
            {
                var path = $"t{t}/{i:D4}";
                _index.PutDeferred(Samples.Entry(path, FileState.Dirty, generation: 1));
                // The same thread's second write of a path must be the one that stays.
                if (i % 10 == 0)
                {
                    _index.PutDeferred(Samples.Entry(path, FileState.Dirty, generation: 2));
                }
                Assert.NotNull(_index.Get(path));
            }
        });

        Reopen();
        Assert.Equal(Threads * PerThread, _index.Count());
        for (var t = 0; t < Threads; t++)
        {
            for (var i = 0; i < PerThread; i += 10)
            {
                Assert.Equal(2, _index.Get($"t{t}/{i:D4}")!.Generation);
            }
        }
    }

    [Fact]
    public void A_write_after_a_deferred_one_runs_its_commit_itself_when_the_thread_pool_is_busy()
    {
        // Every pool thread blocked, and many more blockers queued ahead of the deferred put's commit:
        // the pool would reach that commit only after adding a thread per blocker (tens of seconds). The
        // busy pool is what a real drive had: upload workers all waiting for one commit only the pool ran.
        // Not disposed: blockers still queued when the test ends run later and must find the gate open,
        // not disposed (a disposed gate crashed the test host in CI).
        var release = new ManualResetEventSlim();
        var blockers = Environment.ProcessorCount * 32;
        for (var i = 0; i < blockers; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static gate => gate.Wait(), release, preferLocal: false);
        }
        try
        {
            _index.PutDeferred(Samples.Entry("queued.txt", FileState.Dirty));
            var put = Task.Factory.StartNew(() => _index.Put(Samples.Entry("waited.txt", FileState.Cached)),
                CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

            Assert.True(put.Wait(TimeSpan.FromSeconds(10)), "Put waited for a pool thread to run the queued commit");
        }
        finally
        {
            release.Set();
        }
        Reopen();
        Assert.Equal(FileState.Dirty, _index.Get("queued.txt")!.State);
        Assert.Equal(FileState.Cached, _index.Get("waited.txt")!.State);
    }
}
