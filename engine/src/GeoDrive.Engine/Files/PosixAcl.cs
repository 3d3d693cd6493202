using System.Buffers.Binary;
using System.Globalization;

namespace GeoDrive.Engine.Files;

/// <summary>
/// A POSIX access ACL (the system.posix_acl_access attribute) and its short text form, as getfacl -c writes it on one
/// line with ids: "u::rw-,u:1001:r--,g::r--,m::r--,o::---" (geodrive-acl). Only ACLs with entries beyond the mode's
/// three are kept: a minimal ACL is the mode. Ids are numeric, as the file system stores them.
/// </summary>
public sealed class PosixAcl
{
    /// <summary>The attribute the kernel keeps a file's access ACL in.</summary>
    public const string AttributeName = "system.posix_acl_access";

    private const uint Version = 2;
    private const int MaxEntries = 64;

    private const ushort UserObj = 0x01, User = 0x02, GroupObj = 0x04, Group = 0x08, Mask = 0x10, Other = 0x20;

    private readonly List<(ushort Tag, ushort Perm, uint Id)> _entries;

    private PosixAcl(List<(ushort Tag, ushort Perm, uint Id)> entries) => _entries = entries;

    /// <summary>True when the ACL says more than the mode does (named users or groups, or a mask).</summary>
    public bool IsExtended => _entries.Exists(e => e.Tag is User or Group or Mask);

    /// <summary>The ACL in the kernel's attribute form, or null for bytes that are not one.</summary>
    public static PosixAcl? FromAttribute(byte[] value)
    {
        if (value.Length < 4 || (value.Length - 4) % 8 != 0 || BinaryPrimitives.ReadUInt32LittleEndian(value) != Version)
        {
            return null;
        }
        var entries = new List<(ushort, ushort, uint)>();
        for (var at = 4; at < value.Length; at += 8)
        {
            entries.Add((BinaryPrimitives.ReadUInt16LittleEndian(value.AsSpan(at)), BinaryPrimitives.ReadUInt16LittleEndian(value.AsSpan(at + 2)),
                BinaryPrimitives.ReadUInt32LittleEndian(value.AsSpan(at + 4))));
        }
        return Valid(entries) ? new PosixAcl(entries) : null;
    }

    public byte[] ToAttribute()
    {
        var bytes = new byte[4 + 8 * _entries.Count];
        BinaryPrimitives.WriteUInt32LittleEndian(bytes, Version);
        for (var i = 0; i < _entries.Count; i++)
        {
            var at = 4 + 8 * i;
            BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(at), _entries[i].Tag);
            BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(at + 2), _entries[i].Perm);
            BinaryPrimitives.WriteUInt32LittleEndian(bytes.AsSpan(at + 4), _entries[i].Id);
        }
        return bytes;
    }

    public override string ToString() => string.Join(',', _entries.Select(e =>
    {
        var (letter, named) = e.Tag switch
        {
            UserObj => ("u", false),
            User => ("u", true),
            GroupObj => ("g", false),
            Group => ("g", true),
            Mask => ("m", false),
            _ => ("o", false),
        };
        var perm = new string([(e.Perm & 4) != 0 ? 'r' : '-', (e.Perm & 2) != 0 ? 'w' : '-', (e.Perm & 1) != 0 ? 'x' : '-']);
        return $"{letter}:{(named ? e.Id.ToString(CultureInfo.InvariantCulture) : "")}:{perm}";
    }));

    /// <summary>The ACL the text form names, or null for text that is not a valid one (a hostile or damaged object's metadata).</summary>
    public static PosixAcl? Parse(string? text)
    {
        if (string.IsNullOrEmpty(text) || text.Length > 4096)
        {
            return null;
        }
        var entries = new List<(ushort, ushort, uint)>();
        foreach (var part in text.Split(','))
        {
            if (part.Split(':') is not [var letter, var id, { Length: 3 } perm])
            {
                return null;
            }
            var named = id.Length > 0;
            uint number = uint.MaxValue;
            if (named && (!uint.TryParse(id, NumberStyles.None, CultureInfo.InvariantCulture, out number) || number == uint.MaxValue))
            {
                return null;
            }
            ushort? tag = (letter, named) switch
            {
                ("u", false) => UserObj,
                ("u", true) => User,
                ("g", false) => GroupObj,
                ("g", true) => Group,
                ("m", false) => Mask,
                ("o", false) => Other,
                _ => null,
            };
            if (tag is null)
            {
                return null;
            }
            var bits = (ushort)((perm[0] == 'r' ? 4 : 0) | (perm[1] == 'w' ? 2 : 0) | (perm[2] == 'x' ? 1 : 0));
            if (perm[0] is not ('r' or '-') || perm[1] is not ('w' or '-') || perm[2] is not ('x' or '-'))
            {
                return null;
            }
            entries.Add((tag.Value, bits, number));
        }
        return Valid(entries) ? new PosixAcl(entries) : null;
    }

    /// <summary>
    /// The kernel's own rule: one owner, owning group and other entry, named entries in tag and then id order with no id
    /// twice, and a mask whenever there are named entries.
    /// </summary>
    private static bool Valid(List<(ushort Tag, ushort Perm, uint Id)> entries)
    {
        if (entries.Count is < 3 or > MaxEntries)
        {
            return false;
        }
        for (var i = 1; i < entries.Count; i++)
        {
            var (before, now) = (entries[i - 1], entries[i]);
            if (now.Tag < before.Tag || (now.Tag == before.Tag && (now.Tag is not (User or Group) || now.Id <= before.Id)))
            {
                return false;
            }
        }
        var tags = entries.Select(e => e.Tag).ToHashSet();
        var named = tags.Contains(User) || tags.Contains(Group);
        return tags.Contains(UserObj) && tags.Contains(GroupObj) && tags.Contains(Other) && (!named || tags.Contains(Mask))
            && entries.TrueForAll(e => e.Perm <= 7 && (e.Tag is User or Group ? e.Id != uint.MaxValue : true));
    }
}
