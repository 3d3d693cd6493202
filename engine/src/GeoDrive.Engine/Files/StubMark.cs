using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Files;

/// <summary>
/// A stub's own mark: an extended attribute on the cache file (<see cref="Name"/>) with the object it
/// stands for. A cache file that carries it holds a placeholder's zeros, never data, whatever the index
/// says or whether there is an index at all; a file without it is data (docs/architecture.md, "Stubs
/// carry their own mark"). Set before a file becomes a stub, removed only once its bytes are real
/// (a verified recall). On Windows the ProjFS placeholder state plays this part: every call is a no-op there.
/// </summary>
public sealed partial record StubMark(string Key, long Size, DateTimeOffset ModifiedUtc, string? Sha256, string? ETag, string? VersionId)
{
    /// <summary>The attribute's name; the mount hides it and refuses to set or remove it.</summary>
    public const string Name = "user.geodrive.stub";

    private const string Version = "geodrive-stub/1";

    public static StubMark For(FileEntry entry, string key) => new(key, entry.Size, entry.ModifiedUtc, entry.Checksum, entry.ETag, entry.VersionId);

    /// <summary>True when the cache file is still exactly the placeholder this mark made (size and time untouched).</summary>
    public bool IsPlaceholder(LocalFile local) => local.Size == Size && local.ModifiedUtc == ModifiedUtc;

    public static void Write(string localPath, StubMark mark)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        var text = string.Join('\n', Version, mark.Key, mark.Size.ToString(CultureInfo.InvariantCulture),
            mark.ModifiedUtc.UtcTicks.ToString(CultureInfo.InvariantCulture), mark.Sha256 ?? "", mark.ETag ?? "", mark.VersionId ?? "");
        var bytes = Encoding.UTF8.GetBytes(text);
        if (Native.LSetXAttr(localPath, Name, bytes, (nuint)bytes.Length, 0) != 0)
        {
            throw new IOException($"The stub mark could not be written on '{localPath}' (errno {Marshal.GetLastPInvokeError()}); the cache volume must support user extended attributes.");
        }
    }

    /// <summary>The mark, or null for a file that carries none (data) or one this version cannot read.</summary>
    public static StubMark? Read(string localPath)
    {
        if (OperatingSystem.IsWindows())
        {
            return null;
        }
        var buffer = new byte[4096];
        var length = Native.LGetXAttr(localPath, Name, buffer, (nuint)buffer.Length);
        if (length <= 0)
        {
            return null;
        }
        var fields = Encoding.UTF8.GetString(buffer, 0, (int)length).Split('\n');
        if (fields.Length != 7 || fields[0] != Version
            || !long.TryParse(fields[2], NumberStyles.None, CultureInfo.InvariantCulture, out var size)
            || !long.TryParse(fields[3], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
        {
            return null;
        }
        static string? Text(string field) => field.Length == 0 ? null : field;
        return new StubMark(fields[1], size, new DateTimeOffset(ticks, TimeSpan.Zero), Text(fields[4]), Text(fields[5]), Text(fields[6]));
    }

    /// <summary>The file's bytes are real now: the mark goes (no error when there is none).</summary>
    public static void Clear(string localPath)
    {
        if (!OperatingSystem.IsWindows())
        {
            _ = Native.LRemoveXAttr(localPath, Name);
        }
    }

    private static partial class Native
    {
        [LibraryImport("libc", EntryPoint = "lsetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int LSetXAttr(string path, string name, byte[] value, nuint size, int flags);

        [LibraryImport("libc", EntryPoint = "lgetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial nint LGetXAttr(string path, string name, byte[] value, nuint size);

        [LibraryImport("libc", EntryPoint = "lremovexattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int LRemoveXAttr(string path, string name);
    }
}
