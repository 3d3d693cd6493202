using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Service.FrontEnds;

/// <summary>What ProjFS projects, read from the drive's index (FileEntryProjection filters and names the children).</summary>
public static class IndexProjection
{
    /// <summary>
    /// Entries at or under a folder. The index compares paths case-sensitively while Windows does not,
    /// so a folder asked for in another case than the bucket's falls back to the whole index, which the
    /// projection then matches case-insensitively.
    /// </summary>
    public static Func<string, IEnumerable<FileEntry>> FilesUnder(IFileIndex index) => folder =>
    {
        if (folder.Length == 0)
        {
            return index.All();
        }
        var under = index.Under(folder).ToList();
        return under.Count > 0 ? under : index.All();
    };
}
