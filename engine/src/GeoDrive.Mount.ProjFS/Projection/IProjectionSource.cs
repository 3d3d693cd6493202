using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Mount.ProjFS.Naming;

namespace GeoDrive.Mount.ProjFS.Projection;

/// <summary>
/// What the mount projects into the virtualization root: the drive as the index knows it (every file,
/// uploaded or not, and the folders their paths imply). ProjFS merges it with what is on disk, so a
/// local file shows whether or not it is here, and a stub (dehydrated file) shows from here.
/// </summary>
public interface IProjectionSource
{
    /// <summary>The direct children of <paramref name="folder"/> ("" = root), any order.</summary>
    IReadOnlyList<ProjectedItem> List(string folder);

    /// <summary>The item at <paramref name="path"/>, matched case-insensitively; null when there is none.</summary>
    ProjectedItem? Find(string path);
}

/// <summary>
/// A projection over the engine's file entries: folders are derived from file paths (the index holds
/// files only). <paramref name="filesUnder"/> returns the entries at or under a folder ("" = all);
/// the Service passes the engine's index query.
/// </summary>
public sealed class FileEntryProjection(Func<string, IEnumerable<FileEntry>> filesUnder, Func<string, bool> isInternal) : IProjectionSource
{
    public IReadOnlyList<ProjectedItem> List(string folder)
    {
        var prefix = folder.Length == 0 ? "" : folder + "/";
        var children = new Dictionary<string, ProjectedItem>(ProjFsNameComparer.Instance);
        foreach (var entry in filesUnder(folder))
        {
            if (entry.Path.Length <= prefix.Length || !ProjFsNameComparer.Instance.Equals(entry.Path[..prefix.Length], prefix))
            {
                continue;
            }
            var rest = entry.Path[prefix.Length..];
            var slash = rest.IndexOf('/');
            var childPath = entry.Path[..(prefix.Length + (slash < 0 ? rest.Length : slash))];
            if (isInternal(childPath))
            {
                continue;
            }
            if (slash < 0)
            {
                children[rest] = ProjectedItem.File(entry);
            }
            else if (!children.TryGetValue(rest[..slash], out var existing) || existing.IsDirectory)
            {
                // A folder's time is its newest file's: what a listing shows before the folder is hydrated.
                var time = existing is null || existing.ModifiedUtc < entry.ModifiedUtc ? entry.ModifiedUtc : existing.ModifiedUtc;
                children[rest[..slash]] = ProjectedItem.Folder(childPath, time);
            }
        }
        return [.. children.Values];
    }

    public ProjectedItem? Find(string path)
    {
        if (path.Length == 0 || isInternal(path))
        {
            return null;
        }
        var name = DrivePath.Name(path);
        return List(DrivePath.Parent(path)).FirstOrDefault(i => ProjFsNameComparer.Instance.Equals(i.Name, name));
    }
}
