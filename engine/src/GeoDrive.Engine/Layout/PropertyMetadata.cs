using System.Globalization;
using System.Text;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Layout;

/// <summary>
/// A file's properties as its object's user metadata (docs/object-layout.md, "File properties"), within S3's limit of
/// 2 KB of user metadata per object: what does not fit is left out, attributes first, and named so the drive can say so.
/// </summary>
public static class PropertyMetadata
{
    /// <summary>The last write time to the nanosecond, "seconds.nanoseconds" since the Unix epoch; refines geodrive-mtime.</summary>
    public const string MtimeNsKey = "geodrive-mtime-ns";

    /// <summary>Owner and group ids, "uid:gid".</summary>
    public const string OwnerKey = "geodrive-owner";

    /// <summary>Owner and group names, "user:group" (percent-encoded; a side is empty when the host had no name for the id).</summary>
    public const string OwnerNameKey = "geodrive-owner-name";

    /// <summary>The POSIX access ACL in short text form (u::rw-,u:1001:r--,g::r--,m::r--,o::---), when it says more than the mode.</summary>
    public const string AclKey = "geodrive-acl";

    /// <summary>user.* extended attributes: "name=value&amp;…", names without "user.", both percent-encoded bytes.</summary>
    public const string XattrKey = "geodrive-xattr";

    /// <summary>On Windows, the file's kept attributes by name ("ReadOnly,Hidden"; <see cref="WindowsFileProperties.Kept"/>).</summary>
    public const string WindowsAttributesKey = "geodrive-win-attributes";

    /// <summary>On Windows, the file's security descriptor as SDDL: owner, group and the DACL's explicit entries.</summary>
    public const string SddlKey = "geodrive-sddl";

    /// <summary>S3's limit: the UTF-8 bytes of every user metadata name and value together.</summary>
    public const int Limit = 2048;

    /// <summary>
    /// Adds the properties to <paramref name="metadata"/> as far as the limit allows, in this order: time, owner, Windows
    /// attributes, ACL, security descriptor (SDDL), owner names, then attributes by name. Returns what was left out
    /// ("user.comment", "ACL", "security descriptor", "owner names"), empty when all fit.
    /// </summary>
    public static List<string> Add(Dictionary<string, string> metadata, FileProperties properties)
    {
        var left = new List<string>();
        var used = Size(metadata);
        bool TryAdd(string key, string value)
        {
            var cost = Encoding.UTF8.GetByteCount(key) + Encoding.UTF8.GetByteCount(value);
            if (used + cost > Limit)
            {
                return false;
            }
            metadata[key] = value;
            used += cost;
            return true;
        }
        TryAdd(MtimeNsKey, properties.Modified.ToString());
        if (properties.Owner is { } owner)
        {
            TryAdd(OwnerKey, string.Create(CultureInfo.InvariantCulture, $"{owner.Uid}:{owner.Gid}"));
        }
        if (properties.Windows is { } windows)
        {
            TryAdd(WindowsAttributesKey, windows.AttributesText);
        }
        if (properties.Acl is { } acl && !TryAdd(AclKey, acl.ToString()))
        {
            left.Add("ACL");
        }
        if (properties.Windows is { Sddl: { } sddl } && !TryAdd(SddlKey, sddl))
        {
            left.Add("security descriptor");
        }
        if (properties.Owner is { UserName: not null } or { GroupName: not null }
            && !TryAdd(OwnerNameKey, Escape(properties.Owner.UserName ?? "") + ":" + Escape(properties.Owner.GroupName ?? "")))
        {
            left.Add("owner names");
        }
        var pairs = new StringBuilder();
        var attributesCost = Encoding.UTF8.GetByteCount(XattrKey);
        foreach (var attribute in properties.Attributes)
        {
            var pair = (pairs.Length > 0 ? "&" : "") + Escape(Encoding.UTF8.GetBytes(attribute.Name)) + "=" + Escape(attribute.Value);
            if (used + attributesCost + pairs.Length + pair.Length > Limit)
            {
                left.Add("user." + attribute.Name);
                continue;
            }
            pairs.Append(pair);
        }
        if (pairs.Length > 0)
        {
            metadata[XattrKey] = pairs.ToString();
        }
        return left;
    }

    /// <summary>
    /// The properties an object records for a stub made of it: mode and time as before (geodrive-mode, geodrive-mtime) and,
    /// where recorded, the exact time, owner, ACL and attributes. Anything malformed (a hostile or damaged object) is left out.
    /// </summary>
    public static FileProperties Read(ObjectInfo head, UnixFileMode mode, DateTimeOffset modified)
    {
        var time = FileTime.Exact(modified, FileTime.Parse(Get(head, MtimeNsKey)));
        FileOwner? owner = null;
        if (Get(head, OwnerKey)?.Split(':') is [var uidText, var gidText]
            && uint.TryParse(uidText, NumberStyles.None, CultureInfo.InvariantCulture, out var uid)
            && uint.TryParse(gidText, NumberStyles.None, CultureInfo.InvariantCulture, out var gid))
        {
            string? user = null, group = null;
            if (Get(head, OwnerNameKey)?.Split(':') is [var userText, var groupText])
            {
                user = NameOrNull(userText);
                group = NameOrNull(groupText);
            }
            owner = new FileOwner(uid, gid, user, group);
        }
        var attributes = new List<FileAttribute>();
        if (Get(head, XattrKey) is { Length: > 0 } list)
        {
            foreach (var pair in list.Split('&'))
            {
                if (pair.Split('=') is [var nameText, var valueText] && Unescape(nameText) is { Length: > 0 } nameBytes && Unescape(valueText) is { } value
                    && Encoding.UTF8.GetString(nameBytes) is var name && !name.Contains('\0', StringComparison.Ordinal) && !name.StartsWith("geodrive.", StringComparison.Ordinal))
                {
                    attributes.Add(new FileAttribute(name, value));
                }
            }
        }
        var windows = head.Metadata.ContainsKey(WindowsAttributesKey) || head.Metadata.ContainsKey(SddlKey)
            ? new WindowsFileProperties(WindowsFileProperties.ParseAttributes(Get(head, WindowsAttributesKey)),
                Get(head, SddlKey) is var sddl && WindowsFileProperties.IsUsableSddl(sddl) ? sddl : null)
            : null;
        return new FileProperties(mode, time, owner, attributes, PosixAcl.Parse(Get(head, AclKey))) { Windows = windows };
    }

    private static string? Get(ObjectInfo head, string key) => head.Metadata.TryGetValue(key, out var value) ? value : null;

    private static string? NameOrNull(string text) =>
        Unescape(text) is { Length: > 0 and <= 256 } bytes && Encoding.UTF8.GetString(bytes) is var name && !name.Contains('\0', StringComparison.Ordinal) ? name : null;

    private static int Size(Dictionary<string, string> metadata) =>
        metadata.Where(m => m.Key != ObjectLayout.ObjectTaggingKey).Sum(m => Encoding.UTF8.GetByteCount(m.Key) + Encoding.UTF8.GetByteCount(m.Value));

    private static string Escape(string text) => Escape(Encoding.UTF8.GetBytes(text));

    /// <summary>Percent-encoding of bytes: unreserved ASCII as is, every other byte %XX (metadata travels in HTTP headers).</summary>
    private static string Escape(byte[] bytes)
    {
        var text = new StringBuilder(bytes.Length);
        foreach (var b in bytes)
        {
            if (b is (>= (byte)'a' and <= (byte)'z') or (>= (byte)'A' and <= (byte)'Z') or (>= (byte)'0' and <= (byte)'9') or (byte)'-' or (byte)'.' or (byte)'_' or (byte)'~')
            {
                text.Append((char)b);
            }
            else
            {
                text.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
        }
        return text.ToString();
    }

    private static byte[]? Unescape(string text)
    {
        var bytes = new List<byte>(text.Length);
        for (var i = 0; i < text.Length; i++)
        {
            if (text[i] != '%')
            {
                if (text[i] > 127)
                {
                    return null;
                }
                bytes.Add((byte)text[i]);
            }
            else if (i + 2 < text.Length && byte.TryParse(text.AsSpan(i + 1, 2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var b))
            {
                bytes.Add(b);
                i += 2;
            }
            else
            {
                return null;
            }
        }
        return [.. bytes];
    }
}
