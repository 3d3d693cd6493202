using GeoDrive.Core.Paths;
using GeoDrive.Mount.Fuse.Native;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// A case-insensitive drive's names in a case-sensitive cache folder: a path the application wrote in another case
/// is the entry the cache has under it, segment by segment. The exact name is tried first; a folder is read and its
/// names compared folded only when that name is missing, so a name given as it was made costs one stat.
/// See docs/decisions/0019-case-insensitive-drives.md.
/// </summary>
internal sealed class CaseInsensitiveNames(CacheFolder cache)
{
    /// <summary>The cache's path for <paramref name="path"/> (<see cref="FoldedPath"/>), asked through the mount's folder handle.</summary>
    public string Resolve(string path) => FoldedPath.Resolve(path, Exists, NamesIn);

    /// <summary>Whether the cache has exactly this path.</summary>
    public unsafe bool Exists(string path)
    {
        var buffer = stackalloc byte[LibC.StatBufferSize];
        return cache.Stat(path, (nint)buffer) == 0;
    }

    /// <summary>A folder's names, each name once: of names that differ only in case, the ordinal-first.</summary>
    public static IEnumerable<string> Once(IEnumerable<string> names)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        return names.Order(StringComparer.Ordinal).Where(n => seen.Add(DrivePath.FoldCase(n)));
    }

    private IEnumerable<string>? NamesIn(string folder) => cache.Names(folder, out var names) < 0 ? null : names;
}
