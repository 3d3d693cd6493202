using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// <see cref="KernelNames"/> against a model of the kernel's names (docs/decisions/0036-names-the-kernel-keeps.md): the
/// kernel learns a name when it is used, drops it when it is deleted or told to forget it, and a rename moves it (a
/// folder's rename moves the folder's node, and its names with it). Whenever everything waiting has been told, the
/// kernel holds exactly the names kept, so never more than the budget. A seeded random sequence of uses, deletes and
/// renames of files and of a folder, with a small budget and batch; the seed is printed and replayable.
/// </summary>
public sealed class KernelNamesModelTests(ITestOutputHelper output)
{
    private const int ENOENT = 2;

    /// <summary>The kernel's names as (folder node, name); folders by path, the renamed one keeping its node.</summary>
    private sealed class ModelKernel
    {
        private readonly Lock _gate = new();
        private readonly HashSet<(ulong Folder, string Name)> _held = [];

        public Dictionary<string, ulong> Folders { get; } = new() { [""] = 1, ["a"] = 7, ["a/b"] = 8, ["c"] = 9 };

        public ulong? Node(string folder)
        {
            lock (_gate)
            {
                return Folders.TryGetValue(folder, out var node) ? node : null;
            }
        }

        public int Forget(ulong folder, string name)
        {
            lock (_gate)
            {
                return _held.Remove((folder, name)) ? 0 : -ENOENT;
            }
        }

        public void Learn(string path) => Change(() => _held.Add(Pair(path)));

        public void Drop(string path) => Change(() => _held.Remove(Pair(path)));

        public void Move(string from, string to) => Change(() =>
        {
            _held.Remove(Pair(to));
            if (_held.Remove(Pair(from)))
            {
                _held.Add(Pair(to));
            }
        });

        public void MoveFolder(string from, string to) => Change(() =>
        {
            Folders[to] = Folders[from];
            Folders.Remove(from);
        });

        /// <summary>The paths of the names held, by the folders' paths now.</summary>
        public string[] Paths()
        {
            lock (_gate)
            {
                var byNode = Folders.ToDictionary(f => f.Value, f => f.Key);
                return [.. _held.Select(h => byNode[h.Folder].Length == 0 ? h.Name : $"{byNode[h.Folder]}/{h.Name}").Order(StringComparer.Ordinal)];
            }
        }

        private (ulong, string) Pair(string path)
        {
            var slash = path.LastIndexOf('/');
            return (Folders[slash < 0 ? "" : path[..slash]], path[(slash + 1)..]);
        }

        private void Change(Action change)
        {
            lock (_gate)
            {
                change();
            }
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    public async Task Once_everything_waiting_is_told_the_kernel_holds_exactly_the_names_kept(int run)
    {
        var seed = Environment.GetEnvironmentVariable("GEODRIVE_TEST_SEED") is { } fixedSeed ? int.Parse(fixedSeed) : Random.Shared.Next() + run;
        output.WriteLine($"seed {seed} (GEODRIVE_TEST_SEED={seed} replays it)");
        var random = new Random(seed);
        var kernel = new ModelKernel();
        const int Budget = 6;
        // A batch larger than any run of uses between checks: the thread tells only when asked, so the sequence replays exactly.
        using var names = new KernelNames(Budget, batch: 1_000_000, kernel.Node, kernel.Forget);
        string[] files = ["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7"];
        var renamed = ("a/b", "x");
        string AnyPath()
        {
            var folders = kernel.Folders.Keys.Order(StringComparer.Ordinal).ToArray();
            var folder = folders[random.Next(folders.Length)];
            var file = files[random.Next(files.Length)];
            return folder.Length == 0 ? file : $"{folder}/{file}";
        }
        void Use(string path)
        {
            kernel.Learn(path);
            names.Used(path);
        }

        for (var step = 0; step < 3_000; step++)
        {
            switch (random.Next(20))
            {
                case < 12:
                    Use(AnyPath());
                    break;
                case < 14:
                    var gone = AnyPath();
                    kernel.Drop(gone);
                    names.Deleted(gone);
                    break;
                case < 17:
                    var (from, to) = (AnyPath(), AnyPath());
                    if (from != to)
                    {
                        // rename(2) looks the source up first.
                        Use(from);
                        kernel.Move(from, to);
                        names.Renamed(from, to);
                    }
                    break;
                case 17:
                    kernel.MoveFolder(renamed.Item1, renamed.Item2);
                    names.Renamed(renamed.Item1, renamed.Item2);
                    renamed = (renamed.Item2, renamed.Item1);
                    break;
                default:
                    await names.WhenToldAsync();
                    Assert.Equal(kernel.Paths(), names.KeptNames().Order(StringComparer.Ordinal));
                    Assert.True(names.Count <= Budget);
                    break;
            }
        }
        await names.WhenToldAsync();
        Assert.Equal(kernel.Paths(), names.KeptNames().Order(StringComparer.Ordinal));
    }
}
