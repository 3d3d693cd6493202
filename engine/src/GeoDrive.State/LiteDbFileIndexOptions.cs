namespace GeoDrive.State;

/// <summary>Tunables of a <see cref="LiteDbFileIndex"/>; the defaults suit a production drive.</summary>
public sealed class LiteDbFileIndexOptions
{
    /// <summary>How many events the index keeps; older ones are pruned.</summary>
    public int MaxEvents { get; init; } = 100_000;

    /// <summary>Pruning runs after this many appends (and once at open), not on every append.</summary>
    public int PruneEventsEvery { get; init; } = 1_000;

    /// <summary>How long a writer waits for the background log writer before it reports the index as failed.</summary>
    public TimeSpan WriteTimeout { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>The fewest paths a filter of known paths is sized for (tests make it small, to see it refilled).</summary>
    internal long KnownPathsCapacity { get; init; } = 65_536;

    internal void Validate()
    {
        if (MaxEvents < 1) throw new ArgumentOutOfRangeException(nameof(MaxEvents), MaxEvents, "MaxEvents must be at least 1.");
        if (PruneEventsEvery < 1) throw new ArgumentOutOfRangeException(nameof(PruneEventsEvery), PruneEventsEvery, "PruneEventsEvery must be at least 1.");
        if (WriteTimeout <= TimeSpan.Zero) throw new ArgumentOutOfRangeException(nameof(WriteTimeout), WriteTimeout, "WriteTimeout must be positive.");
    }
}
