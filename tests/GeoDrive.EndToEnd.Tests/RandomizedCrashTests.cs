using System.Globalization;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The randomized crash run (<see cref="CrashSimulation"/>): CI runs a short one; tests/soak/run.sh runs
/// the long one with GEODRIVE_CRASH_ROUNDS, GEODRIVE_CRASH_OPERATIONS, GEODRIVE_CRASH_KILLS and writes its
/// table to GEODRIVE_CRASH_REPORT. GEODRIVE_CRASH_SEED replays a run.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class RandomizedCrashTests(S3ServerFixture s3, ITestOutputHelper output) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();

    public Task InitializeAsync() => _service.StartAsync();

    public Task DisposeAsync() => _service.DisposeAsync().AsTask();

    private static int Setting(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) ? value : fallback;

    [Fact]
    public async Task Random_operations_kills_and_outages_never_lose_or_change_a_byte_of_any_file()
    {
        var seed = Setting("GEODRIVE_CRASH_SEED", Random.Shared.Next());
        var rounds = Setting("GEODRIVE_CRASH_ROUNDS", 10);
        var operations = Setting("GEODRIVE_CRASH_OPERATIONS", 100);
        var kills = Setting("GEODRIVE_CRASH_KILLS", 2);
        output.WriteLine($"seed {seed} (replay: GEODRIVE_CRASH_SEED={seed}); {rounds} rounds of {operations} operations, {kills} kills each");
        Console.WriteLine($"randomized crash test: seed {seed}");
        var simulation = new CrashSimulation(s3, _service, seed, line =>
        {
            output.WriteLine(line);
            // Live on the console too: a long run shows where it is.
            Console.WriteLine("randomized crash test: " + line);
        });
        var started = DateTime.UtcNow;
        var report = Environment.GetEnvironmentVariable("GEODRIVE_CRASH_REPORT") is { Length: > 0 } path ? path : null;
        // Written after every round, so a long run stopped part-way keeps the table of what it checked.
        simulation.RoundChecked += () =>
        {
            if (report is not null)
            {
                File.WriteAllText(report, Table(simulation, DateTime.UtcNow - started, rounds));
            }
        };
        try
        {
            await simulation.RunAsync(rounds, operations, kills);
        }
        finally
        {
            Console.WriteLine("randomized crash test: " + string.Join(", ", simulation.Counts.Select(c => $"{c.Key} {c.Value}")));
            if (report is not null)
            {
                await File.WriteAllTextAsync(report, Table(simulation, DateTime.UtcNow - started, rounds));
            }
        }
    }

    private static string Table(CrashSimulation simulation, TimeSpan took, int roundsPlanned)
    {
        var lines = new List<string>
        {
            $"seed {simulation.Seed}; {simulation.Rounds.Count} of {roundsPlanned} rounds passed their checks; {took.TotalMinutes:0.0} min",
            "",
            "| round | operations | kills | settled in (s) |",
            "|---:|---:|---:|---:|",
        };
        lines.AddRange(simulation.Rounds.Select(r => $"| {r.Round} | {r.Operations} | {r.Kills} | {r.Settle.TotalSeconds:0.0} |"));
        lines.AddRange(["", "| operation | runs |", "|---|---:|"]);
        lines.AddRange(simulation.Counts.Select(c => $"| {c.Key} | {c.Value} |"));
        return string.Join('\n', lines) + "\n";
    }
}
