using GeoDrive.Core.Model;
using LiteDB;

namespace GeoDrive.State.Mapping;

/// <summary>DriveEvent &lt;-&gt; BSON, by hand for the same reasons as <see cref="FileEntryDocument"/>.</summary>
internal static class DriveEventDocument
{
    public const string Time = "time";
    public const string Kind = "kind";

    /// <summary>Without "_id": the collection's Int64 auto-id numbers events in append order.</summary>
    public static BsonDocument ToDocument(DriveEvent driveEvent)
    {
        var doc = new BsonDocument
        {
            [Time] = Ticks.From(driveEvent.TimeUtc),
            [Kind] = driveEvent.Kind.ToString(),
            ["message"] = driveEvent.Message,
        };
        if (driveEvent.Path is not null) doc["path"] = driveEvent.Path;
        if (driveEvent.ErrorId is not null) doc["errorId"] = driveEvent.ErrorId;
        return doc;
    }

    public static DriveEvent FromDocument(BsonDocument doc) => new()
    {
        Id = doc["_id"].AsInt64,
        TimeUtc = Ticks.To(doc[Time].AsInt64),
        Kind = Enum.Parse<DriveEventKind>(doc[Kind].AsString, ignoreCase: false),
        Path = doc["path"].IsNull ? null : doc["path"].AsString,
        Message = doc["message"].IsNull ? "" : doc["message"].AsString,
        ErrorId = doc["errorId"].IsNull ? null : doc["errorId"].AsString,
    };
}
