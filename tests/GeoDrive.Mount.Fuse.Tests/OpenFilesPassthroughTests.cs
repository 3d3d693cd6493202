using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// <see cref="OpenFiles.Choose"/> against the kernel's rules for FUSE passthrough (docs/decisions/0034-fuse-passthrough.md):
/// the opens of one file are all passthrough or none is, they share one backing file, and only a read of a local file
/// starts it. A seeded random sequence of opens and releases on a few paths; the seed is printed and replayable.
/// </summary>
public sealed class OpenFilesPassthroughTests(ITestOutputHelper output)
{
    private sealed record Handle(OpenPath Target, OpenMode Mode, int BackingId);

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    public void Opens_of_one_file_never_mix_passthrough_and_served_and_share_one_backing_file_registered_once(int run)
    {
        var seed = Environment.GetEnvironmentVariable("GEODRIVE_TEST_SEED") is { } fixedSeed ? int.Parse(fixedSeed) : Random.Shared.Next() + run;
        output.WriteLine($"seed {seed} (GEODRIVE_TEST_SEED={seed} replays it)");
        var random = new Random(seed);
        var open = new OpenFiles();
        string[] paths = ["a.bin", "b.bin", "c.bin"];
        var live = new List<Handle>();
        var registered = new Dictionary<int, string>();
        var nextId = 0;

        for (var step = 0; step < 2_000; step++)
        {
            if (live.Count > 0 && random.Next(3) == 0)
            {
                var handle = live[random.Next(live.Count)];
                live.Remove(handle);
                if (handle.Mode != OpenMode.Served)
                {
                    var dropped = open.EndPassthrough(handle.Target);
                    var stillPassing = live.Any(h => h.Target == handle.Target && h.Mode != OpenMode.Served);
                    Assert.Equal(stillPassing ? 0 : handle.BackingId, dropped);
                    if (dropped > 0)
                    {
                        Assert.True(registered.Remove(dropped));
                    }
                }
                if (open.Release(handle.Target, modified: false, out _, out _, out _))
                {
                    // The last close, told to the engine as the mount tells it.
                    open.Reported(handle.Target);
                }
                continue;
            }

            var path = paths[random.Next(paths.Length)];
            var target = open.Acquire(path);
            var readOnlyLocal = random.Next(4) != 0;
            var refuses = random.Next(10) == 0;
            var others = live.Where(h => h.Target == target).ToList();
            var registerCalls = 0;
            var mode = open.Choose(target, readOnlyLocal, () =>
            {
                registerCalls++;
                if (refuses)
                {
                    return 0;
                }
                registered[++nextId] = path;
                return nextId;
            }, out var backingId);

            // Never a mix on one file: the kernel would refuse the open (ETXTBSY) or fail it (EIO).
            if (others.Any(h => h.Mode != OpenMode.Served))
            {
                Assert.NotEqual(OpenMode.Served, mode);
                Assert.Equal(others[0].BackingId, backingId);
                Assert.Equal(0, registerCalls);
            }
            else if (others.Count > 0)
            {
                Assert.Equal(OpenMode.Served, mode);
                Assert.Equal(0, registerCalls);
            }
            else
            {
                Assert.Equal(readOnlyLocal ? 1 : 0, registerCalls);
                Assert.Equal(readOnlyLocal && !refuses ? OpenMode.Passthrough : OpenMode.Served, mode);
            }
            // Only a read of a local file is read by the kernel; a writer among passthrough opens is served uncached and
            // counts as a change (a shared map of it writes past the service).
            Assert.True(mode != OpenMode.Passthrough || readOnlyLocal);
            if (mode == OpenMode.PassthroughDirect)
            {
                Assert.True(open.TakeModified(target));
            }
            Assert.True(mode == OpenMode.Served ? backingId == 0 : backingId > 0);
            live.Add(new Handle(target, mode, backingId));
        }

        foreach (var handle in live)
        {
            if (handle.Mode != OpenMode.Served && open.EndPassthrough(handle.Target) is > 0 and var id)
            {
                Assert.True(registered.Remove(id));
            }
            if (open.Release(handle.Target, modified: false, out _, out _, out _))
            {
                open.Reported(handle.Target);
            }
        }
        // Every backing file registered was dropped again.
        Assert.Empty(registered);
    }
}
