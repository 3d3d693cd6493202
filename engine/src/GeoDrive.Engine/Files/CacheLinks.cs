using GeoDrive.Core.Errors;

namespace GeoDrive.Engine.Files;

/// <summary>
/// The engine (root) never follows a link planted in the cache: before it makes, reads or writes a file's
/// bytes, no part of the path below the cache root (the file itself included) may be a symbolic link. A user
/// who owns a folder made through the mount could otherwise swap one of its folders for a link to
/// <c>/root/…</c> and have the service write recalled bytes or stubs there.
/// </summary>
public static class CacheLinks
{
    /// <summary>The cache path of a drive path whose bytes are about to be made, read or written: refused (PlantedLink) through a link.</summary>
    public static string DataPath(string root, string drivePath)
    {
        var local = Core.Paths.DrivePath.ToLocal(root, drivePath);
        Refuse(root, local);
        return local;
    }

    /// <summary>Throws PlantedLink (PermissionDenied) when a component of <paramref name="local"/> below <paramref name="root"/> is a link.</summary>
    public static void Refuse(string root, string local)
    {
        var rootFull = Path.GetFullPath(root).TrimEnd('/');
        var at = local;
        while (at.Length > rootFull.Length && at.StartsWith(rootFull + "/", StringComparison.Ordinal))
        {
            if (new FileInfo(at).LinkTarget is { } target)
            {
                throw new GeoDriveException(ErrorIds.PlantedLink, ErrorKind.PermissionDenied,
                    $"'{Path.GetRelativePath(rootFull, at)}' in the drive's cache is a link (to '{target}'), which GeoDrive never follows; nothing was read or written through it.",
                    "Remove the link from the cache folder (it was not made through the drive), and check who can write there.");
            }
            at = Path.GetDirectoryName(at) ?? "";
        }
    }
}
