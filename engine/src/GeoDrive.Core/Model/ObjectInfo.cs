namespace GeoDrive.Core.Model;

/// <summary>What the bucket says about one object.</summary>
public sealed record ObjectInfo(
    string Key,
    long Size,
    string? ETag,
    DateTimeOffset LastModifiedUtc,
    IReadOnlyDictionary<string, string> Metadata,
    string? VersionId = null);

/// <summary>
/// One version of an object, or a delete marker, as a listing of the bucket's versions shows it (newest first).
/// A bucket that never kept versions shows its one object under the version id "null".
/// </summary>
public sealed record StoredVersion(string Key, string VersionId, bool IsLatest, bool IsDeleteMarker, long Size, string? ETag, DateTimeOffset LastModifiedUtc);

/// <summary>
/// The version of an object a read must get (If-Match on the ETag, and the version id where the bucket
/// keeps versions): an object replaced meanwhile fails the read with ObjectMismatch instead of mixing versions.
/// </summary>
public readonly record struct ObjectVersion(string? ETag, string? VersionId)
{
    public bool IsKnown => !string.IsNullOrEmpty(ETag) || !string.IsNullOrEmpty(VersionId);
}

/// <summary>
/// What an upload may replace: nothing (the key must be free: If-None-Match: *), exactly the version it
/// compared with (If-Match on its ETag), or anything (<see cref="Any"/>). A server that holds something else
/// refuses the PUT (ObjectMismatch), so a version another site wrote after the comparison is never overwritten.
/// </summary>
public readonly record struct PutCondition(bool KeyFree, string? ETag)
{
    public static PutCondition Any => default;

    /// <summary>Only if the key holds no object.</summary>
    public static PutCondition Absent => new(true, null);

    /// <summary>Only over this version (nothing when the ETag is unknown: <see cref="Any"/>).</summary>
    public static PutCondition Replacing(ObjectInfo? current) =>
        current is null ? Absent : string.IsNullOrEmpty(current.ETag) ? Any : new(false, current.ETag);

    /// <summary>Only over the version with this ETag.</summary>
    public static PutCondition Matching(string etag) => new(false, etag);

    public bool IsAny => !KeyFree && ETag is null;
}
