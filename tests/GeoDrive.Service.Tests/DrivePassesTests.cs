using System.Threading.Channels;
using GeoDrive.Service.Drives;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace GeoDrive.Service.Tests;

/// <summary>The scheduler's passes over the drives, on a fake clock: one tick is one pass per drive.</summary>
public sealed class DrivePassesTests : IAsyncLifetime
{
    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);
    private readonly FakeTimeProvider _time = new();
    private readonly DrivePasses _passes;
    private readonly CancellationTokenSource _stop = new();
    private readonly Channel<string> _passed = Channel.CreateUnbounded<string>();
    private readonly HashSet<string> _removed = [];
    private readonly List<string> _drives = ["a", "broken", "c"];
    private Task _running = Task.CompletedTask;

    public DrivePassesTests() => _passes = new DrivePasses(_time, NullLogger.Instance);

    public Task InitializeAsync()
    {
        _running = _passes.RunAsync<string>(Interval, () => [.. _drives.Select(d => (d, d))], d => !_removed.Contains(d), async (drive, token) =>
        {
            await _passed.Writer.WriteAsync(drive, token);
            if (drive == "broken")
            {
                throw new InvalidOperationException("this drive's pass fails");
            }
        }, _stop.Token);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _stop.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => _running);
    }

    private async Task<List<string>> PassesAsync(int count)
    {
        var seen = new List<string>();
        for (var i = 0; i < count; i++)
        {
            seen.Add(await _passed.Reader.ReadAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
        }
        return seen;
    }

    [Fact]
    public async Task Every_tick_passes_over_each_drive_in_turn_and_a_failing_pass_stops_neither_the_others_nor_the_next_tick()
    {
        _time.Advance(Interval);
        Assert.Equal(["a", "broken", "c"], await PassesAsync(3));

        _time.Advance(Interval);
        Assert.Equal(["a", "broken", "c"], await PassesAsync(3));
    }

    [Fact]
    public async Task A_drive_removed_since_the_tick_listed_it_gets_no_pass()
    {
        _removed.Add("a");
        _time.Advance(Interval);

        Assert.Equal(["broken", "c"], await PassesAsync(2));
    }

    [Fact]
    public async Task While_a_drive_is_removed_or_restarted_no_pass_runs_and_the_passes_go_on_after()
    {
        var exclusive = await _passes.ExclusiveAsync(CancellationToken.None);
        _time.Advance(Interval);
        var first = _passed.Reader.ReadAsync().AsTask();
        // The tick came and is held off: its first pass waits for the exclusive section to end.
        await Task.Yield();
        Assert.False(first.IsCompleted);

        exclusive.Dispose();

        Assert.Equal("a", await first.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(["broken", "c"], await PassesAsync(2));
    }
}
