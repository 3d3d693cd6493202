using GeoDrive.Core.Model;
using LiteDB;

namespace GeoDrive.State.Mapping;

/// <summary>
/// FileEntry &lt;-&gt; BSON, field by field. Written by hand rather than by BsonMapper's reflection so that a
/// renamed or added property can never silently change what is on disk; the round-trip test fails
/// instead. States are stored by name (never renumbered), times as UTC ticks: a BSON date keeps only
/// milliseconds and LiteDB reads it back in local time.
/// </summary>
internal static class FileEntryDocument
{
    public const string State = "state";

    public static BsonDocument ToDocument(FileEntry entry)
    {
        var doc = new BsonDocument
        {
            ["_id"] = entry.Path,
            [State] = entry.State.ToString(),
            ["pinned"] = entry.Pinned,
            ["size"] = entry.Size,
            ["modified"] = Ticks.From(entry.ModifiedUtc),
            ["accessed"] = Ticks.From(entry.LastAccessUtc),
            ["generation"] = entry.Generation,
            ["failedAttempts"] = entry.FailedAttempts,
        };
        SetIfNotNull(doc, "dirtySince", Ticks.From(entry.DirtySinceUtc));
        SetIfNotNull(doc, "checksum", entry.Checksum);
        SetIfNotNull(doc, "xxh128", entry.Xxh128);
        SetIfNotNull(doc, "key", entry.ObjectKey);
        SetIfNotNull(doc, "etag", entry.ETag);
        SetIfNotNull(doc, "versionId", entry.VersionId);
        SetIfNotNull(doc, "replacesEtag", entry.ReplacesETag);
        SetIfNotNull(doc, "unseenEtag", entry.UnseenETag);
        SetIfNotNull(doc, "nextAttempt", Ticks.From(entry.NextAttemptUtc));
        SetIfNotNull(doc, "lastError", entry.LastError);
        return doc;
    }

    public static FileEntry FromDocument(BsonDocument doc) => new()
    {
        Path = doc["_id"].AsString,
        State = Enum.Parse<FileState>(doc[State].AsString, ignoreCase: false),
        Pinned = doc["pinned"].AsBoolean,
        Size = doc["size"].AsInt64,
        ModifiedUtc = Ticks.To(doc["modified"].AsInt64),
        LastAccessUtc = Ticks.To(doc["accessed"].AsInt64),
        DirtySinceUtc = Ticks.ToNullable(doc["dirtySince"]),
        Generation = doc["generation"].AsInt64,
        Checksum = StringOrNull(doc["checksum"]),
        // After the checksum: setting that drops it.
        Xxh128 = StringOrNull(doc["xxh128"]),
        ObjectKey = StringOrNull(doc["key"]),
        ETag = StringOrNull(doc["etag"]),
        VersionId = StringOrNull(doc["versionId"]),
        ReplacesETag = StringOrNull(doc["replacesEtag"]),
        UnseenETag = StringOrNull(doc["unseenEtag"]),
        FailedAttempts = doc["failedAttempts"].AsInt32,
        NextAttemptUtc = Ticks.ToNullable(doc["nextAttempt"]),
        LastError = StringOrNull(doc["lastError"]),
    };

    private static void SetIfNotNull(BsonDocument doc, string field, string? value)
    {
        if (value is not null) doc[field] = value;
    }

    private static void SetIfNotNull(BsonDocument doc, string field, long? value)
    {
        if (value is not null) doc[field] = value.Value;
    }

    // A missing field reads as BsonValue.Null, so documents without optional fields stay valid.
    private static string? StringOrNull(BsonValue value) => value.IsNull ? null : value.AsString;
}

/// <summary>DateTimeOffset as UTC ticks (Int64): exact to the tick, no time-zone conversion on read.</summary>
internal static class Ticks
{
    public static long From(DateTimeOffset value) => value.UtcTicks;

    public static long? From(DateTimeOffset? value) => value?.UtcTicks;

    public static DateTimeOffset To(long utcTicks) => new(utcTicks, TimeSpan.Zero);

    public static DateTimeOffset? ToNullable(BsonValue value) => value.IsNull ? null : To(value.AsInt64);
}
