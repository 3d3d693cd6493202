using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>
/// A stub's own mark: an extended attribute on the cache file (<see cref="Name"/>) saying it is a
/// placeholder of this size and time, and which object it stands for when that is not its own name's key.
/// A cache file that carries it holds a placeholder's zeros, never data, whatever the index says or
/// whether there is an index at all; a file without it is data (docs/architecture.md, "Stubs carry their
/// own mark"). Set before a file becomes a stub, removed only once its bytes are real (a verified
/// recall). Kept short, so it fits in the inode and a stub still holds no block. On Windows the ProjFS
/// placeholder state plays this part: every call is a no-op there.
/// </summary>
/// <param name="Key">The object key when it differs from the key of the file's own name (a renamed stub), else null.</param>
/// <param name="KeyHash">The first 12 hex digits of the SHA-256 of the object key: a stub renamed on disk while its
/// index did not hear of it is matched to the entry it was (whose key it no longer names).</param>
public sealed partial record StubMark(long Size, DateTimeOffset ModifiedUtc, string? Key, string KeyHash)
{
    /// <summary>The attribute's name; the mount hides it and refuses to set or remove it.</summary>
    public const string Name = "user.geodrive.stub";

    private const string Version = "s1";

    // The same mark on a stub a recall is writing into (docs/decisions/0028-recall-recorded-by-its-mark.md).
    private const string RecallingVersion = "r1";

    /// <summary>
    /// A recall is writing the object's bytes into this stub: whatever the file holds is a copy of (part of) the
    /// object, never bytes of anyone's, and a restart makes it a clean stub again. Set by the recall before its first
    /// byte, through the handle its bytes go in by, so the index need not have heard of the recall before it starts.
    /// </summary>
    public bool Recalling { get; init; }

    /// <summary>Whether cache files carry marks here (not on Windows, where ProjFS's placeholder state stands in).</summary>
    public static bool Supported => !OperatingSystem.IsWindows();

    public static StubMark For(FileEntry entry, string key, string ownKey) => new(entry.Size, entry.ModifiedUtc, key == ownKey ? null : key, HashOf(key));

    public static string HashOf(string key) =>
        Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes(key)))[..12];

    /// <summary>True when the cache file is still exactly the placeholder this mark made (size and time untouched).</summary>
    public bool IsPlaceholder(LocalFile local) => local.Size == Size && local.ModifiedUtc == ModifiedUtc;

    /// <summary>Marks a cache file, opened beneath the cache and through no link.</summary>
    public static void Write(string cacheRoot, string localPath, StubMark mark)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Read);
        Write(handle, localPath, mark);
    }

    /// <summary>Marks the open cache file (<paramref name="localPath"/> names it in an error).</summary>
    public static void Write(SafeFileHandle handle, string localPath, StubMark mark)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        var text = string.Join('\n', mark.Recalling ? RecallingVersion : Version, mark.Size.ToString(CultureInfo.InvariantCulture),
            mark.ModifiedUtc.UtcTicks.ToString(CultureInfo.InvariantCulture), mark.KeyHash, mark.Key ?? "");
        var bytes = Encoding.UTF8.GetBytes(text);
        if (FileProperties.Native.FSetXAttr(handle, Name, bytes, (nuint)bytes.Length, 0) != 0)
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
        return Parse(buffer, Native.LGetXAttr(localPath, Name, buffer, (nuint)buffer.Length));
    }

    /// <summary>The open file's mark, or null for a file that carries none (data) or one this version cannot read.</summary>
    public static StubMark? Read(SafeFileHandle handle)
    {
        if (OperatingSystem.IsWindows())
        {
            return null;
        }
        var buffer = new byte[4096];
        return Parse(buffer, FileProperties.Native.FGetXAttr(handle, Name, buffer, (nuint)buffer.Length));
    }

    private static StubMark? Parse(byte[] buffer, nint length)
    {
        if (length <= 0)
        {
            return null;
        }
        var fields = Encoding.UTF8.GetString(buffer, 0, (int)length).Split('\n', 5);
        if (fields.Length != 5 || fields[0] is not (Version or RecallingVersion)
            || !long.TryParse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture, out var size)
            || !long.TryParse(fields[2], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
        {
            return null;
        }
        return new StubMark(size, new DateTimeOffset(ticks, TimeSpan.Zero), fields[4].Length == 0 ? null : fields[4], fields[3])
        {
            Recalling = fields[0] == RecallingVersion,
        };
    }

    /// <summary>The file's bytes are real now: the mark goes (no error when there is none).</summary>
    public static void Clear(string localPath)
    {
        if (!OperatingSystem.IsWindows())
        {
            _ = Native.LRemoveXAttr(localPath, Name);
        }
    }

    /// <summary>The open file's bytes are real now: the mark goes (no error when there is none).</summary>
    public static void Clear(SafeFileHandle handle)
    {
        if (!OperatingSystem.IsWindows())
        {
            _ = FileProperties.Native.FRemoveXAttr(handle, Name);
        }
    }

    private static partial class Native
    {
        [LibraryImport("libc", EntryPoint = "lgetxattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial nint LGetXAttr(string path, string name, byte[] value, nuint size);

        [LibraryImport("libc", EntryPoint = "lremovexattr", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
        public static partial int LRemoveXAttr(string path, string name);
    }
}
