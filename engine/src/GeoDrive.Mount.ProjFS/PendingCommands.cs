using System.Collections.Concurrent;

namespace GeoDrive.Mount.ProjFS;

/// <summary>
/// Callbacks answered with ERROR_IO_PENDING and completed later (PrjCompleteCommand), by command id,
/// so that ProjFS's CancelCommand (the application gave up, or its handle closed) reaches the work.
/// A command is completed exactly once: by its work, or not at all once cancelled (ProjFS forbids
/// completing a cancelled command).
/// </summary>
public sealed class PendingCommands
{
    private readonly ConcurrentDictionary<int, CancellationTokenSource> _pending = new();

    public int Count => _pending.Count;

    /// <summary>Registers <paramref name="commandId"/>; the token is cancelled by <see cref="Cancel"/> or <paramref name="stopping"/>.</summary>
    public CancellationToken Begin(int commandId, CancellationToken stopping)
    {
        var source = CancellationTokenSource.CreateLinkedTokenSource(stopping);
        if (!_pending.TryAdd(commandId, source))
        {
            source.Dispose();
            throw new InvalidOperationException($"Command {commandId} is already pending.");
        }
        return source.Token;
    }

    /// <summary>ProjFS cancelled the command: its work stops, and it must not be completed.</summary>
    public bool Cancel(int commandId)
    {
        if (!_pending.TryRemove(commandId, out var source))
        {
            return false;
        }
        source.Cancel();
        source.Dispose();
        return true;
    }

    /// <summary>True when the work may complete the command (it was not cancelled meanwhile).</summary>
    public bool End(int commandId)
    {
        if (!_pending.TryRemove(commandId, out var source))
        {
            return false;
        }
        source.Dispose();
        return true;
    }
}
