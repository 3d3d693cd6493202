using GeoDrive.Core.Model;
using LiteDB;

namespace GeoDrive.State.Mapping;

/// <summary>BucketChange &lt;-&gt; BSON, by hand as <see cref="FileEntryDocument"/>. The _id is the journal's own ascending number.</summary>
internal static class BucketChangeDocument
{
    public static BsonDocument ToDocument(BucketChange change)
    {
        var doc = new BsonDocument
        {
            ["_id"] = change.Id,
            ["kind"] = change.Kind.ToString(),
            ["key"] = change.Key,
            ["created"] = Ticks.From(change.CreatedUtc),
            ["attempts"] = change.Attempts,
        };
        if (change.UploadId is not null) doc["uploadId"] = change.UploadId;
        if (change.SourceKey is not null) doc["source"] = change.SourceKey;
        if (change.KnownETag is not null) doc["known"] = change.KnownETag;
        if (change.NextAttemptUtc is { } next) doc["next"] = Ticks.From(next);
        if (change.LastError is not null) doc["lastError"] = change.LastError;
        return doc;
    }

    public static BucketChange FromDocument(BsonDocument doc) => new()
    {
        Id = doc["_id"].AsInt64,
        Kind = Enum.Parse<BucketChangeKind>(doc["kind"].AsString),
        Key = doc["key"].AsString,
        UploadId = doc["uploadId"].IsNull ? null : doc["uploadId"].AsString,
        SourceKey = doc["source"].IsNull ? null : doc["source"].AsString,
        KnownETag = doc["known"].IsNull ? null : doc["known"].AsString,
        CreatedUtc = Ticks.To(doc["created"].AsInt64),
        Attempts = doc["attempts"].AsInt32,
        NextAttemptUtc = doc["next"].IsNull ? null : Ticks.To(doc["next"].AsInt64),
        LastError = doc["lastError"].IsNull ? null : doc["lastError"].AsString,
    };
}
