namespace GeoDrive.Core.Model;

/// <summary>
/// S3 object tags (x-amz-tagging) travel to the store inside the metadata it is given, under a name no user
/// metadata can have: the store takes them out and sends them as the object's tag set.
/// </summary>
public static class ObjectTagging
{
    public const string MetadataKey = "geodrive-object-tagging";

    /// <summary>The tags of a "name=value&amp;…" query, decoded; empty for none.</summary>
    public static IReadOnlyList<KeyValuePair<string, string>> Parse(string? query) =>
        string.IsNullOrEmpty(query)
            ? []
            : query.Split('&', StringSplitOptions.RemoveEmptyEntries)
                .Select(pair => pair.Split('=', 2))
                .Select(kv => new KeyValuePair<string, string>(Uri.UnescapeDataString(kv[0]), kv.Length > 1 ? Uri.UnescapeDataString(kv[1]) : ""))
                .ToList();
}
