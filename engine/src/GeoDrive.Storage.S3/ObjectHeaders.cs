using Amazon.S3.Model;
using GeoDrive.Core.Model;

namespace GeoDrive.Storage.S3;

/// <summary>The metadata an upload or copy is given, as S3 wants it: user metadata headers, and the object tags apart.</summary>
internal static class ObjectHeaders
{
    /// <summary>Puts <paramref name="metadata"/> into <paramref name="target"/>, all but the object tags, which are returned (null: none).</summary>
    public static List<Tag>? Apply(IReadOnlyDictionary<string, string> metadata, MetadataCollection target)
    {
        List<Tag>? tags = null;
        foreach (var (name, value) in metadata)
        {
            if (name == ObjectTagging.MetadataKey)
            {
                tags = [.. ObjectTagging.Parse(value).Select(t => new Tag { Key = t.Key, Value = t.Value })];
            }
            else
            {
                target[name] = value;
            }
        }
        return tags;
    }
}
