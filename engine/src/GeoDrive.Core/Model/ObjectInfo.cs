namespace GeoDrive.Core.Model;

/// <summary>What the bucket says about one object.</summary>
public sealed record ObjectInfo(
    string Key,
    long Size,
    string? ETag,
    DateTimeOffset LastModifiedUtc,
    IReadOnlyDictionary<string, string> Metadata,
    string? VersionId = null);
