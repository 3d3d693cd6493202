namespace GeoDrive.Core.Paths;

/// <summary>
/// A case-insensitive drive's path as a case-sensitive cache folder has it (docs/decisions/0019-case-insensitive-drives.md):
/// each segment as the cache has it when it has one of any case (the ordinal-first when it has several), the rest as given
/// from the first segment it has in no case. The exact name is tried first; a folder's names are read only when it is missing.
/// The cache is reached through the two questions, so the FUSE mount asks through its folder handle and the engine by path.
/// </summary>
public static class FoldedPath
{
    /// <param name="path">A drive path ("" is the root).</param>
    /// <param name="exists">Whether the cache has exactly this drive path.</param>
    /// <param name="namesIn">The names a cache folder holds, or null when it cannot be read.</param>
    public static string Resolve(string path, Func<string, bool> exists, Func<string, IEnumerable<string>?> namesIn)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (path.Length == 0 || exists(path))
        {
            return path;
        }
        var segments = path.Split('/');
        var resolved = "";
        for (var i = 0; i < segments.Length; i++)
        {
            var exact = DrivePath.Combine(resolved, segments[i]);
            if (exists(exact))
            {
                resolved = exact;
                continue;
            }
            var found = namesIn(resolved)?.Where(n => DrivePath.SameFolded(n, segments[i])).Order(StringComparer.Ordinal).FirstOrDefault();
            if (found is null)
            {
                return DrivePath.Combine(resolved, string.Join('/', segments[i..]));
            }
            resolved = DrivePath.Combine(resolved, found);
        }
        return resolved;
    }

    /// <summary>
    /// <see cref="Resolve(string, Func{string, bool}, Func{string, IEnumerable{string}?})"/> against a cache folder by path,
    /// for the engine: a segment takes a name its folder lists, so it never leaves the cache.
    /// </summary>
    public static string Resolve(string cachePath, string path) =>
        Resolve(path,
            p => Path.Exists(DrivePath.ToLocal(cachePath, p)),
            folder =>
            {
                try
                {
                    return Directory.EnumerateFileSystemEntries(folder.Length == 0 ? cachePath : DrivePath.ToLocal(cachePath, folder))
                        .Select(e => Path.GetFileName(e)).ToList();
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    return null;
                }
            });
}
