using System.Globalization;
using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Layout;

/// <summary>
/// How a drive's files appear in the bucket (docs/object-layout.md). Other tools read buckets that
/// GeoDrive writes, so these names and formats are a compatibility promise: extend, never change.
/// </summary>
public static class ObjectLayout
{
    /// <summary>User metadata (x-amz-meta-…): SHA-256 of the object's bytes, lowercase hex.</summary>
    public const string Sha256Key = "geodrive-sha256";

    /// <summary>
    /// User metadata: XXH3-128 of the same bytes, lowercase hex (32 digits), beside <see cref="Sha256Key"/> only; what a
    /// recall checks the bytes it fetched against (docs/decisions/0027-recall-checked-by-xxh128.md).
    /// </summary>
    public const string Xxh128Key = "geodrive-xxh128";

    /// <summary>User metadata: the file's last write time, UTC, ISO 8601 round-trip format.</summary>
    public const string MtimeKey = "geodrive-mtime";

    /// <summary>User metadata: the file's size in bytes (decimal), a cross-check of Content-Length.</summary>
    public const string SizeKey = "geodrive-size";

    /// <summary>User metadata: Unix permission bits, octal (e.g. "644").</summary>
    public const string ModeKey = "geodrive-mode";

    /// <summary>User metadata: the id of the drive (site) that wrote the object, so a site tells its own uploads from another's.</summary>
    public const string SiteKey = "geodrive-site";

    /// <summary>
    /// User metadata of a case-insensitive drive's objects: the file's name (the key's last segment) in the case it was
    /// written, percent-encoded as UTF-8 outside printable ASCII and for '%'. The key itself is in lower case.
    /// </summary>
    public const string NameKey = "geodrive-name";

    /// <summary>
    /// Not user metadata: the object tags (x-amz-tagging) the store puts on the object, as a URL-encoded query
    /// ("name=value&amp;…"). No policy tag can take this name (tags named geodrive-* are never written).
    /// </summary>
    public const string ObjectTaggingKey = Core.Model.ObjectTagging.MetadataKey;

    /// <summary>Object key for a drive path: the drive's prefix followed by the path exactly as written.</summary>
    public static string KeyFor(string prefix, string path) => prefix + path;

    /// <summary>Object key for a drive path; a case-insensitive drive writes the path in lower case (its name as written is in <see cref="NameKey"/>).</summary>
    public static string KeyFor(string prefix, string path, bool caseInsensitive) =>
        prefix + (caseInsensitive ? Core.Paths.DrivePath.FoldCase(path) : path);

    /// <summary>
    /// Whether <paramref name="key"/> is the path's own key: its key as this drive writes it, or on a case-insensitive drive
    /// a key of the same name in another case (written by another tool), which the file keeps until it is written here.
    /// </summary>
    public static bool IsOwnKey(string prefix, string key, string path, bool caseInsensitive) =>
        key == KeyFor(prefix, path, caseInsensitive)
        || (caseInsensitive && key.StartsWith(prefix, StringComparison.Ordinal) && Core.Paths.DrivePath.SameFolded(key[prefix.Length..], path));

    /// <summary>Whether a key is written in a case-insensitive drive's one case (its part after the prefix is folded).</summary>
    public static bool IsFolded(string prefix, string key) =>
        key.StartsWith(prefix, StringComparison.Ordinal) && string.Equals(key, prefix + Core.Paths.DrivePath.FoldCase(key[prefix.Length..]), StringComparison.Ordinal);

    /// <summary>Adds the file's name as written (<see cref="NameKey"/>), for a case-insensitive drive whose key is folded.</summary>
    public static void AddName(Dictionary<string, string> metadata, string path) =>
        metadata[NameKey] = EncodeMetadataText(Core.Paths.DrivePath.Name(path));

    /// <summary>
    /// The name recorded in <see cref="NameKey"/>, when it is a usable name that differs from <paramref name="keyName"/> only in
    /// case; else null (the key's own name is shown).
    /// </summary>
    public static string? RecordedName(ObjectInfo head, string keyName)
    {
        if (!head.Metadata.TryGetValue(NameKey, out var text))
        {
            return null;
        }
        string name;
        try
        {
            name = Uri.UnescapeDataString(text);
        }
        catch (UriFormatException)
        {
            return null;
        }
        // Never a name the key's own could not be: the key's name passed DrivePath's checks, this one must too.
        return name.Length > 0 && name is not ("." or "..") && !name.Contains('/', StringComparison.Ordinal) && !name.Contains('\\', StringComparison.Ordinal)
               && !name.Any(char.IsControl)
               && Core.Paths.DrivePath.SameFolded(name, keyName)
            ? name
            : null;
    }

    /// <summary>Text that travels in an HTTP header: '%' and characters outside printable ASCII percent-encoded as UTF-8.</summary>
    public static string EncodeMetadataText(string text)
    {
        if (text.All(c => c is >= ' ' and <= '~' and not '%'))
        {
            return text;
        }
        var encoded = new System.Text.StringBuilder(text.Length + 16);
        Span<byte> bytes = stackalloc byte[4];
        foreach (var rune in text.EnumerateRunes())
        {
            if (rune.Value is >= ' ' and <= '~' and not '%')
            {
                encoded.Append((char)rune.Value);
                continue;
            }
            var length = rune.EncodeToUtf8(bytes);
            foreach (var b in bytes[..length])
            {
                encoded.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
        }
        return encoded.ToString();
    }

    public static Dictionary<string, string> MetadataFor(string sha256, string? xxh128, long size, DateTimeOffset modifiedUtc, UnixFileMode mode)
    {
        var metadata = new Dictionary<string, string>
        {
            [Sha256Key] = sha256,
            [SizeKey] = size.ToString(CultureInfo.InvariantCulture),
            [MtimeKey] = modifiedUtc.UtcDateTime.ToString("O", CultureInfo.InvariantCulture),
            [ModeKey] = Convert.ToString((int)mode, 8),
        };
        if (xxh128 is not null)
        {
            metadata[Xxh128Key] = xxh128;
        }
        return metadata;
    }

    /// <summary>
    /// Adds the policy's tags for a file as user metadata: names lower-cased, characters outside
    /// [a-z0-9._-] as '-', values with their variables filled in. GeoDrive's own keys (geodrive-*) win.
    /// </summary>
    public static void AddTags(Dictionary<string, string> metadata, IReadOnlyDictionary<string, string> tags, string path, DateTimeOffset modifiedUtc)
    {
        foreach (var (name, value) in tags)
        {
            var key = new string(name.ToLowerInvariant().Select(c => c is (>= 'a' and <= 'z') or (>= '0' and <= '9') or '.' or '_' or '-' ? c : '-').ToArray());
            if (!key.StartsWith("geodrive-", StringComparison.Ordinal))
            {
                metadata[key] = Policies.Model.TagVariables.Expand(value, path, modifiedUtc, Environment.MachineName);
            }
        }
    }

    /// <summary>
    /// Adds the policy's object tags for a file (rules with objectTags: true): names as written, values with their
    /// variables filled in and any character S3 refuses in a tag (outside letters, digits, spaces and + - = . _ : / @)
    /// as '_', at most 256 characters. Nothing is added when there are none.
    /// </summary>
    public static void AddObjectTags(Dictionary<string, string> metadata, IReadOnlyDictionary<string, string> tags, string path, DateTimeOffset modifiedUtc)
    {
        if (tags.Count == 0)
        {
            return;
        }
        var pairs = tags.Select(t =>
        {
            var value = new string(Policies.Model.TagVariables.Expand(t.Value, path, modifiedUtc, Environment.MachineName)
                .Select(c => char.IsAsciiLetterOrDigit(c) || " +-=._:/@".Contains(c, StringComparison.Ordinal) ? c : '_').ToArray());
            return Uri.EscapeDataString(t.Key) + "=" + Uri.EscapeDataString(value.Length > 256 ? value[..256] : value);
        });
        metadata[ObjectTaggingKey] = string.Join('&', pairs);
    }

    /// <summary>Whether two ETags name the same version (quotes and case aside); false when either is unknown.</summary>
    public static bool SameETag(string? a, string? b) =>
        a is not null && b is not null && string.Equals(a.Trim('"'), b.Trim('"'), StringComparison.OrdinalIgnoreCase);

    /// <summary>Whether two answers about one key show the same object: both none, or the same ETag (and version id, where kept).</summary>
    public static bool IsSameObject(ObjectInfo? a, ObjectInfo? b) =>
        a is null || b is null
            ? a is null && b is null
            : SameETag(a.ETag, b.ETag) && (a.VersionId is null || b.VersionId is null || a.VersionId == b.VersionId);

    /// <summary>True for an ETag that is the MD5 of the whole object (a single PUT), not a multipart "…-N" one.</summary>
    public static bool IsPlainMd5(string? etag) => etag?.Trim('"') is { Length: 32 } plain && !plain.Contains('-', StringComparison.Ordinal);

    /// <summary>
    /// True when the object holds exactly the bytes with this size and checksum: size matches and the
    /// checksum recorded at upload matches; for a single-part upload the ETag (the server's MD5 of
    /// what it received) must also equal the MD5 we computed, so the server's copy is proven too.
    /// </summary>
    public static bool Holds(ObjectInfo info, long size, string sha256, string? md5)
    {
        if (info.Size != size)
        {
            return false;
        }
        if (!info.Metadata.TryGetValue(Sha256Key, out var recorded) || !string.Equals(recorded, sha256, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        if (md5 is not null && IsPlainMd5(info.ETag))
        {
            return string.Equals(info.ETag!.Trim('"'), md5, StringComparison.OrdinalIgnoreCase);
        }
        return true;
    }

    /// <summary>
    /// Whether the bucket's object is the version the entry records: the SHA-256 GeoDrive recorded
    /// when both sides have one (an ETag differs for the same bytes uploaded in other parts), else the ETag.
    /// </summary>
    public static bool IsSameVersion(FileEntry entry, ObjectInfo head)
    {
        if (head.Size != entry.Size)
        {
            return false;
        }
        if (entry.Checksum is { } checksum && RecordedChecksum(head) is { } recorded)
        {
            return string.Equals(checksum, recorded, StringComparison.OrdinalIgnoreCase);
        }
        if (TrimETag(entry.ETag) is { } known && TrimETag(head.ETag) is { } current)
        {
            return string.Equals(known, current, StringComparison.OrdinalIgnoreCase);
        }
        return true;
    }

    /// <summary>Verification of a recall for a stub made from an object GeoDrive did not write (no SHA-256 recorded).</summary>
    public static bool ForeignObjectMatches(FileEntry entry, byte[] md5)
    {
        var received = Convert.ToHexStringLower(md5);
        // A single-part ETag is the MD5 of the object's bytes; a multipart one ("…-N") is not, so the size (checked already) must do.
        return TrimETag(entry.ETag) is not { Length: 32 } etag || etag.Contains('-', StringComparison.Ordinal)
            || string.Equals(etag, received, StringComparison.OrdinalIgnoreCase);
    }

    private static string? TrimETag(string? etag) => string.IsNullOrWhiteSpace(etag) ? null : etag.Trim().Trim('"');

    public static string? RecordedChecksum(ObjectInfo head) =>
        head.Metadata.TryGetValue(ObjectLayout.Sha256Key, out var sha) && sha.Length == 64 && sha.All(char.IsAsciiHexDigit)
            ? sha.ToLowerInvariant()
            : null;

    /// <summary>The XXH3-128 recorded beside a well-formed SHA-256 (never alone: it stands for the bytes that one names), else null.</summary>
    public static string? RecordedXxh128(ObjectInfo head) =>
        RecordedChecksum(head) is not null
        && head.Metadata.TryGetValue(Xxh128Key, out var xxh) && xxh.Length == 32 && xxh.All(char.IsAsciiHexDigit)
            ? xxh.ToLowerInvariant()
            : null;

    /// <summary>Takes the checksums an object records (SHA-256, and XXH3-128 beside it) into its file's entry.</summary>
    public static void TakeChecksums(FileEntry entry, ObjectInfo head)
    {
        entry.Checksum = RecordedChecksum(head);
        entry.Xxh128 = RecordedXxh128(head);
    }

    /// <summary>The file's time as GeoDrive recorded it (geodrive-mtime), else the object's upload time.</summary>
    public static DateTimeOffset RecordedMtime(ObjectInfo head) =>
        head.Metadata.TryGetValue(ObjectLayout.MtimeKey, out var text)
        && DateTimeOffset.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.RoundtripKind | DateTimeStyles.AssumeUniversal, out var mtime)
            ? mtime.ToUniversalTime()
            : head.LastModifiedUtc;

    private static readonly UnixFileMode DefaultStubMode =
        UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.OtherRead;

    /// <summary>
    /// The permission bits GeoDrive recorded (geodrive-mode, octal), never set-id bits; else rw-r--r--. A service that is not
    /// privileged must be able to write the stub's bytes back in on recall, so there the owner may always read and write.
    /// </summary>
    public static UnixFileMode RecordedMode(ObjectInfo head) => RecordedMode(head, Environment.IsPrivilegedProcess);

    public static UnixFileMode RecordedMode(ObjectInfo head, bool privileged)
    {
        if (!head.Metadata.TryGetValue(ObjectLayout.ModeKey, out var text) || text.Length is 0 or > 4 || !text.All(c => c is >= '0' and <= '7'))
        {
            return DefaultStubMode;
        }
        var mode = (UnixFileMode)(Convert.ToInt32(text, 8) & 0b111_111_111);
        return privileged ? mode : mode | UnixFileMode.UserRead | UnixFileMode.UserWrite;
    }

    /// <summary>Everything the object records of its file for a stub made of it: mode, time, and where recorded owner, ACL and attributes.</summary>
    public static Files.FileProperties RecordedProperties(ObjectInfo head) => PropertyMetadata.Read(head, RecordedMode(head), RecordedMtime(head));
}
