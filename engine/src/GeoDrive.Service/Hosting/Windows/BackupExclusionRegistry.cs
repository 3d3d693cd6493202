using System.Runtime.Versioning;
using GeoDrive.Service.Drives;
using Microsoft.Win32;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>Keeps each drive's FilesNotToBackup value as <see cref="BackupExclusion.Desired"/> says. Needs the service's LocalSystem (or administrator) rights.</summary>
[SupportedOSPlatform("windows")]
public sealed class BackupExclusionRegistry(ILogger logger) : IBackupExclusions
{
    public void Apply(DriveDefinition definition)
    {
        var name = BackupExclusion.ValueName(definition.Name);
        try
        {
            using var key = Registry.LocalMachine.CreateSubKey(BackupExclusion.KeyPath, writable: true);
            if (BackupExclusion.Desired(definition.CachePath, definition.IncludeCacheInBackup) is { } data)
            {
                if (key.GetValue(name) is not string[] current || !current.SequenceEqual(data, StringComparer.OrdinalIgnoreCase))
                {
                    key.SetValue(name, data, RegistryValueKind.MultiString);
                    logger.LogInformation("Drive {Name}: cache {Cache} excluded from backup (FilesNotToBackup\\{Value})", definition.Name, definition.CachePath, name);
                }
            }
            else
            {
                key.DeleteValue(name, throwOnMissingValue: false);
            }
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or System.Security.SecurityException or IOException)
        {
            // A backup exclusion is advice to backup products; the drive runs without it.
            logger.LogWarning("Drive {Name}: FilesNotToBackup could not be set ({Message}); set it by hand as docs/windows.md shows", definition.Name, ex.Message);
        }
    }

    public void Remove(string driveName)
    {
        try
        {
            using var key = Registry.LocalMachine.OpenSubKey(BackupExclusion.KeyPath, writable: true);
            key?.DeleteValue(BackupExclusion.ValueName(driveName), throwOnMissingValue: false);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or System.Security.SecurityException or IOException)
        {
            logger.LogWarning("Drive {Name}: its FilesNotToBackup value could not be removed ({Message})", driveName, ex.Message);
        }
    }
}
