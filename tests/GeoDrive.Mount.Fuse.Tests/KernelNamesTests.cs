namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// The names of files the kernel may keep, to a budget (docs/decisions/0036-names-the-kernel-keeps.md): which names
/// are told to the kernel, in what order, and under which folder's node. The kernel here is a recorder; the mount's own
/// test (KernelNamesMountTests) tells a real one.
/// </summary>
public sealed class KernelNamesTests
{
    private readonly List<(ulong Folder, string Name)> _told = [];
    private readonly Dictionary<string, ulong> _folders = new() { [""] = 1, ["a"] = 7, ["a/b"] = 8, ["a/b/sub"] = 10, ["c"] = 9 };
    private readonly List<string> _foldersAsked = [];

    private KernelNames Names(int budget, Func<ulong, string, int>? forget = null, int batch = 1) => new(
        budget,
        batch,
        folder =>
        {
            lock (_told)
            {
                _foldersAsked.Add(folder);
                return _folders.TryGetValue(folder, out var node) ? node : null;
            }
        },
        forget ?? ((folder, name) =>
        {
            lock (_told)
            {
                _told.Add((folder, name));
                return 0;
            }
        }));

    [Fact]
    public async Task Past_the_budget_the_least_recently_used_names_are_told_under_their_folders_node()
    {
        using var names = Names(budget: 2);

        names.Used("one.txt");
        names.Used("a/two.txt");
        names.Used("one.txt");        // used again: now the most recent
        names.Used("a/b/three.txt");  // over the budget: a/two.txt is the oldest
        names.Used("c/four.txt");     // one.txt next
        await names.WhenToldAsync();

        Assert.Equal([(7UL, "two.txt"), (1UL, "one.txt")], _told);
        Assert.Equal(2, names.Count);
        Assert.Equal(2, names.Forgotten);
    }

    [Fact]
    public async Task Names_past_the_budget_wait_for_a_whole_batch_and_a_name_used_again_meanwhile_is_not_told()
    {
        using var names = Names(budget: 1, batch: 4);

        names.Used("one.txt");
        names.Used("a/two.txt");       // one.txt waits
        names.Used("a/b/three.txt");   // a/two.txt waits
        names.Used("one.txt");         // a/b/three.txt waits, and one.txt is the most recent again
        Assert.Equal(3, names.Waiting);
        Assert.Equal(0, names.Forgotten);
        await names.WhenToldAsync();

        Assert.Equal([(7UL, "two.txt"), (8UL, "three.txt")], _told);
        Assert.Equal(1, names.Count);

        // one.txt goes past the budget again, from its new place.
        names.Used("c/four.txt");
        await names.WhenToldAsync();
        Assert.Equal([(7UL, "two.txt"), (8UL, "three.txt"), (1UL, "one.txt")], _told);
        Assert.Equal(0, names.Waiting);
    }

    [Fact]
    public async Task A_name_used_again_and_past_the_budget_again_while_it_waits_is_told_once()
    {
        using var names = Names(budget: 1, batch: 4);

        names.Used("one.txt");
        names.Used("a/two.txt");       // one.txt waits
        names.Used("one.txt");         // a/two.txt waits
        names.Used("a/b/three.txt");   // one.txt again: already waiting
        Assert.Equal(2, names.Waiting);
        await names.WhenToldAsync();

        Assert.Equal([(1UL, "one.txt"), (7UL, "two.txt")], _told);
    }

    [Fact]
    public async Task A_batch_not_yet_whole_is_told_when_asked_for()
    {
        using var names = Names(budget: 0, batch: 256);

        names.Used("a/one.txt");
        names.Used("two.txt");
        await names.WhenToldAsync();

        Assert.Equal([(7UL, "one.txt"), (1UL, "two.txt")], _told);
        Assert.Equal(2, names.Forgotten);
    }

    [Fact]
    public void A_batch_is_a_thirty_second_of_the_budget_from_1_to_256()
    {
        Assert.Equal(1, KernelNames.BatchFor(0));
        Assert.Equal(1, KernelNames.BatchFor(20));
        Assert.Equal(32, KernelNames.BatchFor(1_024));
        Assert.Equal(256, KernelNames.BatchFor(8_192));
        Assert.Equal(256, KernelNames.BatchFor(1_000_000));
    }

    [Fact]
    public async Task Within_the_budget_nothing_is_told_and_no_folder_is_asked()
    {
        using var names = Names(budget: 3);

        names.Used("a/one.txt");
        names.Used("a/two.txt");
        names.Used("a/one.txt");
        names.Used("three.txt");
        await names.WhenToldAsync();

        Assert.Empty(_told);
        Assert.Empty(_foldersAsked);
    }

    [Fact]
    public async Task A_folders_node_is_asked_once_for_its_names_and_again_when_the_folder_was_made_anew()
    {
        using var names = Names(budget: 0, forget: (folder, name) =>
        {
            lock (_told)
            {
                _told.Add((folder, name));
                // Node 7 is a folder that was removed: the kernel no longer knows it.
                return folder == 7 ? -2 : 0;
            }
        });

        names.Used("a/one.txt");
        await names.WhenToldAsync();
        lock (_told)
        {
            _folders["a"] = 17; // "a" removed and made again
        }
        names.Used("a/two.txt");
        names.Used("a/three.txt");
        await names.WhenToldAsync();

        // one.txt: node 7 asked (not known yet) and refused, so left; two.txt: the cached 7 refused, so "a" asked again:
        // 17, told; three.txt: 17 from the cache.
        Assert.Equal([(7UL, "one.txt"), (7UL, "two.txt"), (17UL, "two.txt"), (17UL, "three.txt")], _told);
        Assert.Equal(["a", "a"], _foldersAsked);
        Assert.Equal(2, names.Forgotten);
    }

    [Fact]
    public async Task A_name_in_a_folder_that_is_gone_is_dropped_without_telling()
    {
        using var names = Names(budget: 0);

        names.Used("gone/one.txt");
        await names.WhenToldAsync();

        Assert.Empty(_told);
        Assert.Equal(["gone"], _foldersAsked);
        Assert.Equal(0, names.Count);
    }

    [Fact]
    public async Task A_deleted_file_is_not_told_and_frees_its_place()
    {
        using var names = Names(budget: 2);

        names.Used("one.txt");
        names.Used("two.txt");
        names.Deleted("one.txt");
        names.Used("three.txt");
        await names.WhenToldAsync();

        Assert.Empty(_told);
        Assert.Equal(2, names.Count);
    }

    [Fact]
    public async Task A_renamed_file_or_folder_keeps_its_names_place_under_the_new_path()
    {
        using var names = Names(budget: 4);

        names.Used("a/one.txt");
        names.Used("x/two.txt");
        names.Used("x/sub/three.txt");
        names.Used("c/four.txt");
        names.Renamed("a/one.txt", "c/one.txt");   // a file: same place, new path
        names.Renamed("x", "a/b");                 // a folder: every name below it
        names.Renamed("c/four.txt", "c/one.txt");  // onto a kept name: that name is gone with the rename
        names.Used("five.txt");
        names.Used("six.txt");
        names.Used("seven.txt");
        await names.WhenToldAsync();

        // Kept, oldest first: a/b/two.txt, a/b/sub/three.txt, c/one.txt (ex c/four.txt; the c/one.txt it replaced is gone
        // from the kernel with the rename), five.txt; six.txt and seven.txt push the first two out.
        Assert.Equal([(8UL, "two.txt"), (10UL, "three.txt")], _told);
        Assert.Equal(["a/b", "a/b/sub"], _foldersAsked);
        Assert.Equal(4, names.Count);
    }

    [Fact]
    public async Task While_the_thread_is_held_up_at_most_MaxWaiting_names_wait_and_the_rest_are_left_to_the_kernel()
    {
        using var entered = new SemaphoreSlim(0);
        using var gate = new SemaphoreSlim(0);
        var told = 0;
        using var names = Names(budget: 0, forget: (_, _) =>
        {
            if (Interlocked.Increment(ref told) == 1)
            {
                entered.Release();
                gate.Wait();
            }
            return 0;
        });

        names.Used("held.txt");
        await entered.WaitAsync();
        for (var i = 0; i < KernelNames.MaxWaiting + 100; i++)
        {
            names.Used($"f{i}.txt");
        }
        gate.Release();
        await names.WhenToldAsync();

        Assert.Equal(1 + KernelNames.MaxWaiting, told);
    }

    [Fact]
    public async Task Dispose_waits_for_the_call_under_way_drops_what_waits_and_nothing_is_told_after_it()
    {
        using var entered = new SemaphoreSlim(0);
        using var gate = new SemaphoreSlim(0);
        var disposeReturned = false;
        var returnedBeforeTheCallEnded = false;
        var names = Names(budget: 0, forget: (folder, name) =>
        {
            entered.Release();
            gate.Wait();
            lock (_told)
            {
                _told.Add((folder, name));
                returnedBeforeTheCallEnded |= Volatile.Read(ref disposeReturned);
            }
            return 0;
        });

        names.Used("one.txt");
        await entered.WaitAsync();
        names.Used("two.txt");
        var disposing = Task.Run(() =>
        {
            names.Dispose();
            Volatile.Write(ref disposeReturned, true);
        });
        gate.Release(2);
        await disposing;
        names.Used("three.txt");
        await names.WhenToldAsync();

        Assert.False(returnedBeforeTheCallEnded);
        Assert.Contains((1UL, "one.txt"), _told);
        Assert.DoesNotContain((1UL, "three.txt"), _told);
        Assert.Equal(0, names.Count);
    }

    [Fact]
    public async Task A_bounded_stop_says_false_while_a_call_is_stuck_and_true_once_it_ended()
    {
        using var entered = new SemaphoreSlim(0);
        using var gate = new SemaphoreSlim(0);
        using var names = Names(budget: 0, forget: (_, _) =>
        {
            entered.Release();
            gate.Wait();
            return 0;
        });

        names.Used("stuck.txt");
        await entered.WaitAsync();

        // The unmount's case: it waits a bound, then leaves the session allocated rather than free it under the call.
        Assert.False(names.Stop(TimeSpan.FromMilliseconds(50)));
        await names.WhenToldAsync();
        gate.Release();
        Assert.True(names.Stop(Timeout.InfiniteTimeSpan));
    }
}
