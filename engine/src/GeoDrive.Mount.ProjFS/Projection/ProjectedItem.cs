using System.Text;
using GeoDrive.Core.Model;

namespace GeoDrive.Mount.ProjFS.Projection;

/// <summary>
/// One name ProjFS may project into the virtualization root: a folder, or a file as the index knows
/// it. <paramref name="Path"/> is drive-relative with the case the bucket has.
/// </summary>
public sealed record ProjectedItem(
    string Path,
    bool IsDirectory,
    long Size,
    DateTimeOffset ModifiedUtc,
    FileState? State,
    string? ETag,
    string? VersionId)
{
    /// <summary>FILE_ATTRIBUTE_DIRECTORY.</summary>
    public const uint AttributeDirectory = 0x10;

    /// <summary>FILE_ATTRIBUTE_ARCHIVE: an ordinary file.</summary>
    public const uint AttributeArchive = 0x20;

    /// <summary>FILE_ATTRIBUTE_OFFLINE: data not local. Explorer shows the X overlay; backup and antivirus that honour it skip the file.</summary>
    public const uint AttributeOffline = 0x1000;

    public string Name => Core.Paths.DrivePath.Name(Path);

    public static ProjectedItem Folder(string path, DateTimeOffset modifiedUtc) => new(path, true, 0, modifiedUtc, null, null, null);

    public static ProjectedItem File(FileEntry entry) =>
        new(entry.Path, false, entry.Size, entry.ModifiedUtc, entry.State, entry.ETag, entry.VersionId);

    /// <summary>
    /// The attributes a projected item is written with. Everything ProjFS projects has its data only
    /// in the bucket until it is hydrated, so every projected file is OFFLINE; a hydrated file loses
    /// the attribute when the mount turns it into an ordinary (full) file.
    /// </summary>
    public uint FileAttributes => IsDirectory ? AttributeDirectory : AttributeArchive | AttributeOffline;

    /// <summary>
    /// The placeholder's content id: the object's version id if the bucket is versioned, else its
    /// ETag; ProjFS hands it back on every data request, so a placeholder written for one version of
    /// an object is never filled with the bytes of another. At most 128 bytes (UTF-8).
    /// </summary>
    public byte[] ContentId => PlaceholderIds.Encode(VersionId ?? ETag ?? "");
}

/// <summary>The 128-byte ids ProjFS stores in every placeholder (PRJ_PLACEHOLDER_VERSION_INFO).</summary>
public static class PlaceholderIds
{
    public const int Length = 128;

    /// <summary>"GeoDrive/1": which provider (and layout) wrote a placeholder.</summary>
    public static readonly byte[] ProviderId = Encode("GeoDrive/1");

    /// <summary>UTF-8, cut to 128 bytes at a character boundary (ETags and version ids are ASCII in practice).</summary>
    public static byte[] Encode(string value)
    {
        var bytes = Encoding.UTF8.GetBytes(value.Trim('"'));
        if (bytes.Length <= Length)
        {
            return bytes;
        }
        var cut = Length;
        while (cut > 0 && (bytes[cut] & 0xC0) == 0x80)
        {
            cut--;
        }
        return bytes[..cut];
    }

    /// <summary>The id as stored: zero-padded to 128 bytes; a shorter stored id compares equal to its unpadded form.</summary>
    public static string Decode(ReadOnlySpan<byte> stored)
    {
        var end = stored.IndexOf((byte)0);
        return Encoding.UTF8.GetString(end < 0 ? stored : stored[..end]);
    }
}
