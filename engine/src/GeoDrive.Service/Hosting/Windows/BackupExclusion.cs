namespace GeoDrive.Service.Hosting.Windows;

/// <summary>
/// A drive's entry under FilesNotToBackup, the registry value Windows Server Backup and VSS-aware
/// backup products read to leave files out: the bucket is the copy, and a backup of the cache folder
/// would copy useless stubs or recall every file. Plain data, tested on every OS; the registry
/// write is <see cref="BackupExclusionRegistry"/>.
/// </summary>
public static class BackupExclusion
{
    /// <summary>Under HKEY_LOCAL_MACHINE.</summary>
    public const string KeyPath = @"SYSTEM\CurrentControlSet\Control\BackupRestore\FilesNotToBackup";

    public const string ValuePrefix = "GeoDrive-";

    public static string ValueName(string driveName) => ValuePrefix + driveName;

    /// <summary>REG_MULTI_SZ: every file under the cache folder, recursively ("D:\GeoDrive\finance\* /s").</summary>
    public static string[] ValueData(string cachePath)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(cachePath);
        var folder = cachePath.Replace('/', '\\').TrimEnd('\\');
        return [folder + @"\* /s"];
    }

    /// <summary>
    /// What the registry should hold for a drive: its value (excluded, the default), or null when the
    /// administrator opted out with -IncludeCacheInBackup and any value of ours must go.
    /// </summary>
    public static string[]? Desired(string cachePath, bool includeCacheInBackup) =>
        includeCacheInBackup ? null : ValueData(cachePath);
}
