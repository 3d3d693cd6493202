namespace GeoDrive.Core.Paths;

/// <summary>
/// What only the service's own user may read or enter, whatever the process umask: a drive's state folder
/// (0700) and the index with its log and lock (0600). The index holds every file name of a drive, even
/// those in folders its users may not list. No-ops on Windows, where the state folder's ACL does this.
/// </summary>
public static class OwnerOnly
{
    private const UnixFileMode FolderMode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode FileMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;

    /// <summary>Creates the folder as 0700, or makes an existing one 0700.</summary>
    public static void Folder(string path)
    {
        if (OperatingSystem.IsWindows())
        {
            Directory.CreateDirectory(path);
            return;
        }
        Directory.CreateDirectory(path, FolderMode);
        if (System.IO.File.GetUnixFileMode(path) != FolderMode)
        {
            System.IO.File.SetUnixFileMode(path, FolderMode);
        }
    }

    /// <summary>Makes an existing file 0600 (nothing when it does not exist).</summary>
    public static void File(string path)
    {
        if (!OperatingSystem.IsWindows() && System.IO.File.Exists(path) && System.IO.File.GetUnixFileMode(path) != FileMode)
        {
            System.IO.File.SetUnixFileMode(path, FileMode);
        }
    }
}
