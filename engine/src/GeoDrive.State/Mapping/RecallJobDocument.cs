using GeoDrive.Core.Model;
using LiteDB;

namespace GeoDrive.State.Mapping;

/// <summary>RecallJobRecord &lt;-&gt; BSON, by hand for the same reasons as <see cref="FileEntryDocument"/>. The _id is the name in lower case (names compare ignoring case).</summary>
internal static class RecallJobDocument
{
    public static BsonValue Id(string name) => name.ToLowerInvariant();

    public static BsonDocument ToDocument(RecallJobRecord job)
    {
        var doc = new BsonDocument
        {
            ["_id"] = Id(job.Name),
            ["name"] = job.Name,
            ["source"] = job.Source.ToString(),
            ["paths"] = new BsonArray(job.Paths.Select(p => new BsonValue(p))),
            ["recurse"] = job.Recurse,
            ["schedule"] = job.Schedule,
            ["throttleLimit"] = job.ThrottleLimit,
            ["registered"] = Ticks.From(job.RegisteredUtc),
            ["handledUntil"] = Ticks.From(job.HandledUntilUtc),
            ["lastFiles"] = job.LastFiles,
            ["lastBytes"] = job.LastBytes,
            ["lastFailures"] = job.LastFailures,
            ["runCount"] = job.RunCount,
        };
        if (job.TimeZone is not null) doc["timeZone"] = job.TimeZone;
        if (job.LastRunStartUtc is { } start) doc["lastStart"] = Ticks.From(start);
        if (job.LastRunEndUtc is { } end) doc["lastEnd"] = Ticks.From(end);
        if (job.LastResult is { } result) doc["lastResult"] = result.ToString();
        if (job.LastMessage is not null) doc["lastMessage"] = job.LastMessage;
        return doc;
    }

    public static RecallJobRecord FromDocument(BsonDocument doc) => new()
    {
        Name = doc["name"].AsString,
        Source = Enum.Parse<RecallJobSource>(doc["source"].AsString),
        Paths = [.. doc["paths"].AsArray.Select(v => v.AsString)],
        Recurse = doc["recurse"].AsBoolean,
        Schedule = doc["schedule"].AsString,
        TimeZone = doc["timeZone"].IsNull ? null : doc["timeZone"].AsString,
        ThrottleLimit = doc["throttleLimit"].AsInt32,
        RegisteredUtc = Ticks.To(doc["registered"].AsInt64),
        HandledUntilUtc = Ticks.To(doc["handledUntil"].AsInt64),
        LastRunStartUtc = Ticks.ToNullable(doc["lastStart"]),
        LastRunEndUtc = Ticks.ToNullable(doc["lastEnd"]),
        LastFiles = doc["lastFiles"].AsInt32,
        LastBytes = doc["lastBytes"].AsInt64,
        LastFailures = doc["lastFailures"].AsInt32,
        LastResult = doc["lastResult"].IsNull ? null : Enum.Parse<RecallJobResult>(doc["lastResult"].AsString),
        LastMessage = doc["lastMessage"].IsNull ? null : doc["lastMessage"].AsString,
        RunCount = doc["runCount"].AsInt32,
    };
}
