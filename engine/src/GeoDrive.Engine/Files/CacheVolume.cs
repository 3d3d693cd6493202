using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Files;

/// <summary>How full the file system that holds a drive's cache is, as df shows it.</summary>
/// <param name="TotalBytes">Size of the volume.</param>
/// <param name="UsedBytes">Bytes in use (by anything on the volume, not only the cache).</param>
/// <param name="AvailableBytes">Bytes an unprivileged writer can still use.</param>
public readonly record struct VolumeUsage(long TotalBytes, long UsedBytes, long AvailableBytes)
{
    public double UsedPercent => TotalBytes == 0 ? 0 : 100.0 * UsedBytes / TotalBytes;
}

/// <summary>Measures the cache volume; replaceable so threshold logic can be driven by a test's own volume.</summary>
public interface ICacheVolume
{
    VolumeUsage Measure();
}

/// <summary>The real volume under a folder (statvfs through <see cref="DriveInfo"/>).</summary>
public sealed class FolderVolume(string folder) : ICacheVolume
{
    public VolumeUsage Measure()
    {
        var drive = new DriveInfo(folder);
        return new VolumeUsage(drive.TotalSize, drive.TotalSize - drive.TotalFreeSpace, drive.AvailableFreeSpace);
    }

    /// <summary>Only what an unprivileged writer can still use: one statvfs, where <see cref="Measure"/> makes three.</summary>
    public long AvailableBytes() => new DriveInfo(folder).AvailableFreeSpace;
}

/// <summary>A full cache volume, as the engine tells it apart from other write failures and reports it.</summary>
public static class CacheVolume
{
    public static GeoDriveException Full(string path, long size, Exception? inner) => new(
        ErrorIds.CacheVolumeFull, ErrorKind.ResourceUnavailable,
        $"The cache volume is full: '{path}' ({ByteSize.Format(size)}) could not be brought back from the bucket.",
        "Free space on the cache volume, or let GeoDrive stub the least recently used files (cacheThresholds.stubAbove); then open the file again.", inner);
}
