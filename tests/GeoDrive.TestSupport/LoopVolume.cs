using System.Diagnostics;
using System.Globalization;

namespace GeoDrive.TestSupport;

/// <summary>
/// A small ext4 file system of the test's own, loop-mounted in a temp folder, so cache-volume
/// thresholds act on a real volume that fills up quickly. Needs root and a loop device.
/// </summary>
public sealed class LoopVolume : IDisposable
{
    private readonly TempDirectory _temp = new("vol");
    private readonly string _image;

    public LoopVolume(int megabytes)
    {
        _image = _temp.Combine("volume.img");
        MountPath = _temp.CreateSubdirectory("mnt");
        using (var image = new FileStream(_image, FileMode.CreateNew))
        {
            image.SetLength(megabytes * 1024L * 1024L);
        }
        Run("mkfs.ext4", "-q", "-F", "-m", "0", _image);
        Run("mount", "-o", "loop", _image, MountPath);
    }

    public string MountPath { get; }

    /// <summary>Used percentage as df reports it (used / size).</summary>
    public double UsedPercent
    {
        get
        {
            var drive = new DriveInfo(MountPath);
            return 100.0 * (drive.TotalSize - drive.TotalFreeSpace) / drive.TotalSize;
        }
    }

    public long TotalBytes => new DriveInfo(MountPath).TotalSize;

    /// <summary>Bytes in use as df counts them (size - free), the measure cache thresholds are taken on.</summary>
    public long UsedBytes
    {
        get
        {
            var drive = new DriveInfo(MountPath);
            return drive.TotalSize - drive.TotalFreeSpace;
        }
    }

    private static void Run(string file, params string[] arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        var errors = process.StandardError.ReadToEnd();
        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException(string.Create(CultureInfo.InvariantCulture, $"{file} failed ({process.ExitCode}): {errors}"));
        }
    }

    public void Dispose()
    {
        try
        {
            Run("umount", "-l", MountPath);
        }
        catch (InvalidOperationException)
        {
            // Already gone; the image is removed with the temp folder either way.
        }
        _temp.Dispose();
    }
}
