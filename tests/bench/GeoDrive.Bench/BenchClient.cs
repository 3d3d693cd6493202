namespace GeoDrive.Bench;

/// <summary>Where the bench's S3 server is and the settings every client gets alike.</summary>
public sealed record BenchSettings(string Root, string Endpoint, string AccessKey, string SecretKey, int Threads, int MultipartThreads, long PartSize, long MultipartThreshold)
{
    public string DataPath(string relative) => Path.Combine(Root, "data", relative);
}

/// <summary>
/// One way of moving the dataset between local disk and the bucket. A run uploads one set of files
/// and restores another (seeded before, not timed) at the same time; either set may be empty.
/// </summary>
public interface IBenchClient : IAsyncDisposable
{
    string Name { get; }

    /// <summary>Puts <paramref name="files"/> in the bucket (and, for GeoDrive, stubs them) so a run can restore them. Not timed.</summary>
    Task SeedAsync(string run, IReadOnlyList<string> files);

    /// <summary>The timed part: uploads <paramref name="upload"/> and restores <paramref name="restore"/> concurrently; done when all are verified/local.</summary>
    Task RunAsync(string run, IReadOnlyList<string> upload, IReadOnlyList<string> restore);

    /// <summary>Removes what a run left locally (restored files, a drive and its cache). Not timed.</summary>
    Task FinishAsync(string run) => Task.CompletedTask;

    /// <summary>The folder where a mounted client shows the run's files (GeoDrive, rclone mount); null for the others.</summary>
    string? MountFolder(string run) => null;

    /// <summary>CPU seconds and peak RSS of the client's own process(es) since the last call, where it can tell.</summary>
    (double CpuSeconds, long PeakRss)? ResourceUse() => null;
}

internal static class Parallelism
{
    public static Task ForEachAsync<T>(IEnumerable<T> items, int threads, Func<T, CancellationToken, ValueTask> body) =>
        Parallel.ForEachAsync(items, new ParallelOptions { MaxDegreeOfParallelism = threads }, body);
}
