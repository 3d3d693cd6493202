using Microsoft.Extensions.Logging;

namespace GeoDrive.Service.Drives;

/// <summary>
/// The service's scheduler: every interval, one pass over each drive in turn (for a drive host: its policy reloaded
/// if its files changed, its engine ticked, a transfer sample taken), one drive at a time. A pass that fails is
/// logged and the next drive still gets its own; a drive no longer current (removed or restarted meanwhile) is
/// skipped. Removing or restarting a drive holds the passes off (<see cref="ExclusiveAsync"/>), so no drive is
/// stopped half-way through a pass (an upload or a stub). Unit-tested in DrivePassesTests on a fake clock.
/// </summary>
internal sealed class DrivePasses(TimeProvider time, ILogger logger)
{
    private readonly SemaphoreSlim _gate = new(1, 1);

    /// <summary>Waits for the pass under way (if any) and holds the next ones off until disposed.</summary>
    public async Task<IDisposable> ExclusiveAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        return new Release(_gate);
    }

    /// <summary>Runs the passes until <paramref name="cancellationToken"/> is cancelled.</summary>
    /// <param name="drives">The drives as they are at each tick, with their names (for the log).</param>
    /// <param name="isCurrent">False for a drive removed or replaced since the tick listed it.</param>
    public async Task RunAsync<T>(TimeSpan interval, Func<IReadOnlyList<(string Name, T Drive)>> drives, Func<T, bool> isCurrent,
        Func<T, CancellationToken, Task> pass, CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(interval, time);
        while (await timer.WaitForNextTickAsync(cancellationToken))
        {
            foreach (var (name, drive) in drives())
            {
                await _gate.WaitAsync(cancellationToken);
                try
                {
                    if (isCurrent(drive))
                    {
                        await pass(drive, cancellationToken);
                    }
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    logger.LogError(ex, "Drive {Name}: scheduler pass failed", name);
                }
                finally
                {
                    _gate.Release();
                }
            }
        }
    }

    private sealed class Release(SemaphoreSlim gate) : IDisposable
    {
        private int _released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _released, 1) == 0)
            {
                gate.Release();
            }
        }
    }
}
