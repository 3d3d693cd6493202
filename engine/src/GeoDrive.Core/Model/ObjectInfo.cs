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
/// The version of an object a read must get (If-Match on the ETag, and the version id where the bucket
/// keeps versions): an object replaced meanwhile fails the read with ObjectMismatch instead of mixing versions.
/// </summary>
public readonly record struct ObjectVersion(string? ETag, string? VersionId)
{
    public bool IsKnown => !string.IsNullOrEmpty(ETag) || !string.IsNullOrEmpty(VersionId);
}
