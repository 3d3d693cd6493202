using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.State.Tests;

/// <summary>
/// The counts by state that a status call reads are kept by the index as entries change. A seeded random
/// sequence of puts, deferred puts, deletes and renames (files and folders, onto taken names too) is checked
/// against a model after every few operations, against the index's own entries, and after a reopen.
/// GEODRIVE_INDEX_SEED replays a run.
/// </summary>
public sealed class CountByStateTests(ITestOutputHelper output) : IDisposable
{
    private static readonly FileState[] States = Enum.GetValues<FileState>();
    private readonly TempDirectory _dir = new("state-counts");

    public void Dispose() => _dir.Dispose();

    private string DatabasePath => _dir.Combine(".geodrive", "index.db");

    [Fact]
    public void Counts_by_state_follow_a_random_sequence_of_puts_deletes_and_renames_and_survive_a_reopen()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("GEODRIVE_INDEX_SEED"), out var s) ? s : Random.Shared.Next();
        output.WriteLine($"seed {seed} (replay: GEODRIVE_INDEX_SEED={seed})");
        var random = new Random(seed);
        var model = new Dictionary<string, FileState>(StringComparer.Ordinal);
        string Folder() => $"d{random.Next(4)}";
        string File() => $"{Folder()}/f{random.Next(12)}";
        FileState AnyState() => States[random.Next(States.Length)];

        using (var index = LiteDbFileIndex.Open(DatabasePath))
        {
            for (var op = 1; op <= 1_500; op++)
            {
                switch (random.Next(10))
                {
                    case < 4:
                        {
                            var (path, state) = (File(), AnyState());
                            index.Put(Samples.Entry(path, state));
                            model[path] = state;
                            break;
                        }
                    case < 7:
                        {
                            var (path, state) = (File(), AnyState());
                            index.PutDeferred(Samples.Entry(path, state));
                            model[path] = state;
                            break;
                        }
                    case < 9:
                        {
                            var path = File();
                            Assert.Equal(model.Remove(path), index.Delete(path));
                            break;
                        }
                    default:
                        {
                            // A file onto a file, or a folder onto a folder: what is at the new names is replaced.
                            var folder = random.Next(2) == 0;
                            var (from, to) = folder ? (Folder(), Folder()) : (File(), File());
                            if (from == to)
                            {
                                break;
                            }
                            index.Rename(from, to);
                            IndexModel.Rename(model, from, to);
                            break;
                        }
                }
                if (op % 50 == 0)
                {
                    AssertCounts(index, model, $"seed {seed}, operation {op}");
                }
            }
        }
        using (var reopened = LiteDbFileIndex.Open(DatabasePath))
        {
            AssertCounts(reopened, model, $"seed {seed}, after a reopen");
        }
    }

    [Fact]
    public void Counts_by_state_stay_exact_when_writers_on_many_threads_commit_in_groups()
    {
        const int Writers = 6;
        const int OpsEach = 400;
        using var index = LiteDbFileIndex.Open(DatabasePath);
        var finals = new Dictionary<string, FileState>[Writers];
        Parallel.For(0, Writers, new ParallelOptions { MaxDegreeOfParallelism = Writers }, w =>
        {
            var random = new Random(w);
            var mine = finals[w] = new Dictionary<string, FileState>(StringComparer.Ordinal);
            for (var i = 0; i < OpsEach; i++)
            {
                var path = $"w{w}/f{random.Next(50)}";
                if (random.Next(5) == 0)
                {
                    index.Delete(path);
                    mine.Remove(path);
                    continue;
                }
                var state = States[random.Next(States.Length)];
                if (random.Next(2) == 0)
                {
                    index.Put(Samples.Entry(path, state));
                }
                else
                {
                    index.PutDeferred(Samples.Entry(path, state));
                }
                mine[path] = state;
            }
        });
        var model = finals.SelectMany(m => m).ToDictionary(p => p.Key, p => p.Value, StringComparer.Ordinal);
        AssertCounts(index, model, "after the writers");
    }

    /// <summary>The index's counts equal the model's, and the entries the index finds in each state.</summary>
    private static void AssertCounts(LiteDbFileIndex index, Dictionary<string, FileState> model, string where)
    {
        var counts = index.CountByState();
        foreach (var state in States)
        {
            var expected = model.Count(p => p.Value == state);
            Assert.True(expected == counts[state], $"{where}: {state} counted {counts[state]}, the model holds {expected}");
            Assert.True(expected == index.FindByState(state).Count, $"{where}: {state}: the index finds {index.FindByState(state).Count}, the model holds {expected}");
        }
    }
}
