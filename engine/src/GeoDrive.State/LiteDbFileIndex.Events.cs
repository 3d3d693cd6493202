using GeoDrive.Core.Model;
using GeoDrive.State.Mapping;
using LiteDB;

namespace GeoDrive.State;

public sealed partial class LiteDbFileIndex
{
    /// <summary>Appends the event and sets its <see cref="DriveEvent.Id"/> (ascending in append order); not fsynced on its own.</summary>
    public void AppendEvent(DriveEvent driveEvent)
    {
        ArgumentNullException.ThrowIfNull(driveEvent);
        var doc = DriveEventDocument.ToDocument(driveEvent);
        driveEvent.Id = WriteGrouped(() =>
        {
            var id = _events.Insert(doc).AsInt64;

            // Pruning costs a delete over the oldest range, so it runs every N appends, not on each one.
            if (++_appendsSincePrune >= _options.PruneEventsEvery)
            {
                PruneEvents();
            }

            return id;
        }, durable: false); // committed when this returns, synced with the next durable write: an event
                            // is a record for the administrator, not a state anything acts on
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

        return Read(() => query
            .OrderByDescending("$._id")
            .Limit(limit)
            .ToEnumerable()
            .Select(DriveEventDocument.FromDocument)
            .ToList());
    }

    /// <summary>Keeps the newest <see cref="LiteDbFileIndexOptions.MaxEvents"/>; ids have no gaps, so a cut-off id suffices.</summary>
    private void PruneEvents()
    {
        _appendsSincePrune = 0;
        // Not ILiteCollection.Max(): it throws on an empty collection.
        var newest = _events.Query().OrderByDescending("$._id").Limit(1).ToEnumerable().FirstOrDefault();
        if (newest is null)
        {
            return;
        }

        var cutoff = newest["_id"].AsInt64 - _options.MaxEvents;
        if (cutoff > 0)
        {
            _events.DeleteMany(BsonExpression.Create("$._id <= @0", cutoff));
        }
    }
}
