using System.Globalization;

namespace GeoDrive.Bench;

/// <summary>What the mounted clients (GeoDrive, rclone mount) do alike: copy the dataset in, read it back, and their peak RSS.</summary>
internal static class MountedFiles
{
    /// <summary>Copies each file of the dataset into the mount, <see cref="BenchSettings.Threads"/> at a time.</summary>
    public static Task CopyInAsync(BenchSettings settings, string mount, IReadOnlyList<string> files) =>
        Parallelism.ForEachAsync(files, settings.Threads, async (relative, ct) =>
        {
            var destination = Path.Combine(mount, relative);
            Directory.CreateDirectory(Path.GetDirectoryName(destination)!);
            await using var source = new FileStream(settings.DataPath(relative), FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 20, useAsync: true);
            await using var target = new FileStream(destination, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1 << 20, useAsync: true);
            await source.CopyToAsync(target, 1 << 20, ct);
        });

    /// <summary>Reads every file through the mount to its end, <see cref="BenchSettings.Threads"/> at a time.</summary>
    public static Task ReadAllAsync(BenchSettings settings, string mount, IReadOnlyList<string> files) =>
        Parallelism.ForEachAsync(files, settings.Threads, async (relative, ct) =>
        {
            var buffer = new byte[1 << 20];
            await using var source = new FileStream(Path.Combine(mount, relative), FileMode.Open, FileAccess.Read, FileShare.Read, 1, useAsync: true);
            while (await source.ReadAsync(buffer, ct) > 0)
            {
            }
        });

    /// <summary>VmHWM: a process's peak resident set since it started.</summary>
    public static long PeakRss(int pid) =>
        File.ReadLines($"/proc/{pid}/status").FirstOrDefault(l => l.StartsWith("VmHWM:", StringComparison.Ordinal)) is { } line
            ? long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1], CultureInfo.InvariantCulture) * 1024
            : 0;
}
