using GeoDrive.Core.Errors;

namespace GeoDrive.Core.Paths;

/// <summary>
/// Drive-relative paths ('/'-separated, no leading '/'), and the one guard that keeps any name that
/// comes from outside (an object key, an API request) from reaching a file outside the drive's cache.
/// </summary>
public static class DrivePath
{
    /// <summary>
    /// The longest drive path, in UTF-8 bytes, that a drive holds: the index keys files by path and LiteDB
    /// refuses keys of 1,023 bytes or more (docs/decisions/0010-path-length.md).
    /// </summary>
    public const int MaxBytes = 1000;

    /// <summary>True when <paramref name="path"/> is longer than a drive may hold.</summary>
    public static bool IsTooLong(string path) => System.Text.Encoding.UTF8.GetByteCount(path) > MaxBytes;

    /// <summary>The refusal of a path that is too long to be made, with its remedy.</summary>
    public static GeoDriveException TooLong(string path) => new(
        ErrorIds.PathTooLong, ErrorKind.InvalidArgument,
        $"The path '{Printable(path[..Math.Min(path.Length, 120)])}…' is {System.Text.Encoding.UTF8.GetByteCount(path)} bytes long; a drive holds paths of at most {MaxBytes} bytes.",
        "Use shorter folder or file names.");

    /// <summary>Normalises a relative path ("a//b/", "/a/b" → "a/b"); throws for "..", ".", NUL, backslash-free rules violated.</summary>
    public static string Normalize(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var parts = path.Split('/', StringSplitOptions.RemoveEmptyEntries);
        foreach (var part in parts)
        {
            if (part is "." or ".." || part.Contains('\0', StringComparison.Ordinal))
            {
                throw Hostile(path, $"the segment '{Printable(part)}' is not allowed");
            }
        }
        return string.Join('/', parts);
    }

    /// <summary>
    /// Maps an object key to a drive path, or throws HostileObjectKey when the key could escape the
    /// cache (.., absolute, NUL, control characters, backslash) or names the engine's own folder.
    /// </summary>
    public static string FromObjectKey(string key, string prefix)
    {
        ArgumentNullException.ThrowIfNull(key);
        if (!key.StartsWith(prefix, StringComparison.Ordinal))
        {
            throw Hostile(key, $"it is outside the drive's prefix '{prefix}'");
        }
        var rest = key[prefix.Length..];
        if (rest.Length == 0 || rest.StartsWith('/'))
        {
            throw Hostile(key, "it is empty or absolute");
        }
        foreach (var c in rest)
        {
            if (c == '\\' || char.IsControl(c))
            {
                throw Hostile(key, "it contains a backslash or a control character");
            }
        }
        var normalized = Normalize(rest);
        // A folder's key ends in one '/': "a//" is the common prefix of "a//b", whose folder name is empty.
        var named = rest.EndsWith('/') ? rest[..^1] : rest;
        if (normalized.Length == 0 || normalized != named)
        {
            throw Hostile(key, named.Contains("//", StringComparison.Ordinal) || named.EndsWith('/') ? "it holds an empty folder name ('//')" : "it is not in normal form");
        }
        if (IsTooLong(normalized))
        {
            throw Hostile(key, $"its path is longer than the {MaxBytes} bytes a drive path may have");
        }
        return normalized;
    }

    /// <summary>The absolute cache path for a drive path; guaranteed to be inside <paramref name="root"/>.</summary>
    public static string ToLocal(string root, string path)
    {
        var normalized = Normalize(path);
        var full = Path.GetFullPath(Path.Combine(root, normalized));
        var rootFull = Path.GetFullPath(root).TrimEnd('/');
        if (full != rootFull && !full.StartsWith(rootFull + "/", StringComparison.Ordinal))
        {
            throw Hostile(path, "it resolves outside the drive's cache");
        }
        return full;
    }

    public static string Parent(string path)
    {
        var i = path.LastIndexOf('/');
        return i < 0 ? "" : path[..i];
    }

    public static string Name(string path)
    {
        var i = path.LastIndexOf('/');
        return i < 0 ? path : path[(i + 1)..];
    }

    public static string Combine(string folder, string name) => folder.Length == 0 ? name : folder + "/" + name;

    /// <summary>
    /// A name or path in the one case a case-insensitive drive writes its keys in: lower case by the invariant
    /// culture's simple mapping, which keeps the length and the '/' (docs/decisions/0019-case-insensitive-drives.md).
    /// </summary>
    public static string FoldCase(string name) => name.ToLowerInvariant();

    /// <summary>Whether two names are one name on a case-insensitive drive.</summary>
    public static bool SameFolded(string a, string b) => a.Length == b.Length && string.Equals(FoldCase(a), FoldCase(b), StringComparison.Ordinal);

    private static string Printable(string s) => new(s.Select(c => char.IsControl(c) ? '?' : c).ToArray());

    private static GeoDriveException Hostile(string key, string why) => new(
        ErrorIds.HostileObjectKey,
        ErrorKind.InvalidData,
        $"The name '{Printable(key)}' was refused: {why}.",
        "Rename or remove that object in the bucket; GeoDrive never writes outside the drive's cache.");
}
