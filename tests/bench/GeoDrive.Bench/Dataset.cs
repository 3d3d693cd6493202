using System.Globalization;

namespace GeoDrive.Bench;

/// <summary>One dataset: N files of one size, generated once under the bench's work folder.</summary>
public sealed record Dataset(string Name, int Count, long Size)
{
    public string Folder(string root) => Path.Combine(root, "data", Name);

    public long TotalBytes => Count * Size;

    public IEnumerable<string> RelativePaths => Enumerable.Range(0, Count).Select(i => $"{Name}/f{i.ToString("00000", CultureInfo.InvariantCulture)}.bin");

    /// <summary>The seed's sizes (10 KB to 1 GB), scaled to this machine.</summary>
    public static IReadOnlyList<Dataset> ForScale(string scale) => scale switch
    {
        "full" => [new("10KB", 3000, 10_000), new("100KB", 2000, 100_000), new("1MB", 300, 1_000_000), new("10MB", 30, 10_000_000), new("100MB", 3, 100_000_000), new("512MB", 1, 512L * 1024 * 1024)],
        "medium" => [new("10KB", 1000, 10_000), new("100KB", 500, 100_000), new("1MB", 100, 1_000_000), new("10MB", 10, 10_000_000), new("100MB", 2, 100_000_000)],
        "smoke" => [new("10KB", 40, 10_000), new("1MB", 4, 1_000_000), new("20MB", 1, 20_000_000)],
        _ => throw new ArgumentException($"unknown scale '{scale}' (full, medium, smoke)"),
    };

    /// <summary>Writes the files (random bytes, a fixed seed per file) unless they are there already.</summary>
    public void Generate(string root)
    {
        var folder = Folder(root);
        Directory.CreateDirectory(folder);
        var buffer = new byte[1 << 20];
        var index = 0;
        foreach (var relative in RelativePaths)
        {
            var path = Path.Combine(root, "data", relative);
            if (new FileInfo(path) is { Exists: true } existing && existing.Length == Size)
            {
                index++;
                continue;
            }
            var random = new Random(index++);
            using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 20);
            for (long written = 0; written < Size;)
            {
                random.NextBytes(buffer);
                var n = (int)Math.Min(buffer.Length, Size - written);
                file.Write(buffer, 0, n);
                written += n;
            }
        }
    }
}

/// <summary>A workload: what share of the files goes up and what share comes back, at once.</summary>
public sealed record Workload(string Name, int UploadPercent)
{
    public static readonly IReadOnlyList<Workload> All =
    [
        new("upload", 100), new("restore", 0), new("mixed-50-50", 50), new("mixed-20-80", 20), new("mixed-80-20", 80),
    ];
}

/// <summary>One measured run.</summary>
public sealed record Measurement(string Client, string Dataset, string Workload, int Threads, int Files, long Bytes, double Seconds, double? CpuSecondsPer1000Files = null, long? PeakRssBytes = null,
    double? MachineCpuSecondsPer1000Files = null, double? ServerCpuSecondsPer1000Files = null, int Round = 1)
{
    public double FilesPerSecond => Files / Seconds;

    public double MegabytesPerSecond => Bytes / 1e6 / Seconds;
}
