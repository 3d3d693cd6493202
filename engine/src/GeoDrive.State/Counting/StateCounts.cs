using GeoDrive.Core.Model;
using GeoDrive.State.Mapping;
using LiteDB;

namespace GeoDrive.State.Counting;

/// <summary>
/// How many file entries the index holds in each state, kept as entries change, so that a status call reads
/// a handful of numbers instead of counting through the state index (which visits, and holds a set of, every
/// entry in a state: on a drive of 100,000 files, a few MB and tens of ms per call).
/// Not thread-safe: the index changes it only under its write lock and reads it under its read lock. After a
/// rolled-back transaction it is stale (the writes it counted were undone) and is counted again from the index.
/// </summary>
internal sealed class StateCounts
{
    private static readonly FileState[] States = Enum.GetValues<FileState>();
    private readonly long[] _counts = new long[States.Max(s => (int)s) + 1];

    /// <summary>True until <see cref="Recount"/>, and again after <see cref="Invalidate"/>.</summary>
    public bool Stale { get; private set; } = true;

    /// <summary>Counts again from the index, one count per state.</summary>
    public void Recount(Func<FileState, long> count)
    {
        foreach (var state in States)
        {
            _counts[(int)state] = count(state);
        }
        Stale = false;
    }

    /// <summary>The writes counted since the last recount may not have happened (their transaction was rolled back).</summary>
    public void Invalidate() => Stale = true;

    /// <summary>An entry's document went from <paramref name="before"/> to <paramref name="after"/> (null: none).</summary>
    public void Changed(BsonDocument? before, BsonDocument? after)
    {
        if (Stale)
        {
            return;
        }
        Add(before, -1);
        Add(after, +1);
    }

    public IReadOnlyDictionary<FileState, long> Snapshot()
    {
        if (Stale)
        {
            throw new InvalidOperationException("The counts by state are stale: count them again first.");
        }
        return States.ToDictionary(state => state, state => _counts[(int)state]);
    }

    private void Add(BsonDocument? doc, int delta)
    {
        if (doc is not null && doc.TryGetValue(FileEntryDocument.State, out var state) && state.IsString
            && Enum.TryParse<FileState>(state.AsString, ignoreCase: false, out var parsed))
        {
            _counts[(int)parsed] += delta;
        }
    }
}
