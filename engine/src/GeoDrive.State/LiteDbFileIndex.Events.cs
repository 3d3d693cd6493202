using GeoDrive.Core.Model;
using GeoDrive.State.Mapping;
using LiteDB;

namespace GeoDrive.State;

public sealed partial class LiteDbFileIndex
{
    /// <summary>
    /// Appends the event and sets its <see cref="DriveEvent.Id"/> (ascending in append order) without waiting for
    /// its commit: it goes with the next group commit, as a deferred put does, and is never fsynced on its own (an
    /// event is a record for the administrator, not a state anything acts on). Waiting cost every upload a commit
    /// of its own, a fifth of the service's CPU per small file (docs/decisions.md, issue 13). <see cref="ReadEvents"/>
    /// sees every event appended before it.
    /// </summary>
    public void AppendEvent(DriveEvent driveEvent)
    {
        ArgumentNullException.ThrowIfNull(driveEvent);
        ThrowIfDisposed();
        var doc = DriveEventDocument.ToDocument(driveEvent);
        driveEvent.Id = WriteEventDeferred(doc, () =>
        {
            _events.Insert(doc);

            // Pruning costs a delete over the oldest range, so it runs every N appends, not on each one.
            if (++_appendsSincePrune >= _options.PruneEventsEvery)
            {
                PruneEvents();
            }
        });
    }

    /// <summary>Newest first (append order), optionally only those at or after <paramref name="sinceUtc"/> and of one kind.</summary>
    public IReadOnlyList<DriveEvent> ReadEvents(DateTimeOffset? sinceUtc = null, DriveEventKind? kind = null, int limit = 1000)
    {
        ThrowIfDisposed();
        if (limit <= 0)
        {
            return [];
        }

        // No index on time or kind: walking the _id index backwards stops at the limit, and a filtered
        // read of at most MaxEvents documents is cheap enough for an administrator's query.
        var query = _events.Query();
        if (sinceUtc is { } since)
        {
            query = query.Where(BsonExpression.Create($"$.{DriveEventDocument.Time} >= @0", Ticks.From(since)));
        }

        if (kind is { } k)
        {
            query = query.Where(BsonExpression.Create($"$.{DriveEventDocument.Kind} = @0", k.ToString()));
        }

        FlushDeferred();
        return Read(() => query
            .OrderByDescending("$._id")
            .Limit(limit)
            .ToEnumerable()
            .Select(DriveEventDocument.FromDocument)
            .ToList());
    }

    /// <summary>Keeps about the newest <see cref="LiteDbFileIndexOptions.MaxEvents"/>: ids ascend (with a gap only where a failed commit lost events), so a cut-off id suffices.</summary>
    private void PruneEvents()
    {
        _appendsSincePrune = 0;
        var cutoff = NewestEventId() - _options.MaxEvents;
        if (cutoff > 0)
        {
            _events.DeleteMany(BsonExpression.Create("$._id <= @0", cutoff));
        }
    }

    /// <summary>The id of the newest event in the index (0: none).</summary>
    private long NewestEventId()
    {
        // Not ILiteCollection.Max(): it throws on an empty collection.
        var newest = _events.Query().OrderByDescending("$._id").Limit(1).ToEnumerable().FirstOrDefault();
        return newest is null ? 0 : newest["_id"].AsInt64;
    }
}
