using System.Diagnostics;
using System.Globalization;

namespace GeoDrive.Bench;

/// <summary>rclone from Debian's packages: `rclone copy` up and down, the same transfers and chunk settings.</summary>
public sealed class RcloneClient(BenchSettings settings, string bucket) : IBenchClient
{
    public string Name => "rclone";

    public Task SeedAsync(string run, IReadOnlyList<string> files) => CopyUpAsync(run, files);

    public Task RunAsync(string run, IReadOnlyList<string> upload, IReadOnlyList<string> restore) =>
        Task.WhenAll(CopyUpAsync(run, upload), CopyDownAsync(run, restore));

    private Task CopyUpAsync(string run, IReadOnlyList<string> files) =>
        files.Count == 0 ? Task.CompletedTask : RcloneAsync(files, ["copy", Path.Combine(settings.Root, "data"), $"bench:{bucket}/{run}"]);

    private Task CopyDownAsync(string run, IReadOnlyList<string> files) =>
        files.Count == 0 ? Task.CompletedTask : RcloneAsync(files, ["copy", $"bench:{bucket}/{run}", Path.Combine(settings.Root, "restore", Name, run)]);

    private async Task RcloneAsync(IReadOnlyList<string> files, string[] arguments)
    {
        var list = Path.Combine(settings.Root, $"rclone-files-{Guid.NewGuid():N}.txt");
        await File.WriteAllLinesAsync(list, files);
        var psi = new ProcessStartInfo("rclone", [.. arguments,
            "--files-from-raw", list,
            "--transfers", settings.Threads.ToString(CultureInfo.InvariantCulture),
            "--checkers", settings.Threads.ToString(CultureInfo.InvariantCulture),
            .. RcloneRemote.TransferFlags(settings)])
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        RcloneRemote.Configure(psi, settings);
        using var process = Process.Start(psi)!;
        var errors = process.StandardError.ReadToEndAsync();
        await process.StandardOutput.ReadToEndAsync();
        await process.WaitForExitAsync();
        File.Delete(list);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"rclone failed ({process.ExitCode}): {await errors}");
        }
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}

/// <summary>The bench's S3 server as an rclone remote named "bench", and the transfer settings every rclone client gets alike.</summary>
internal static class RcloneRemote
{
    public static void Configure(ProcessStartInfo psi, BenchSettings settings)
    {
        // Credentials by environment, never on the command line (ps shows it to every user).
        psi.Environment["RCLONE_CONFIG_BENCH_TYPE"] = "s3";
        psi.Environment["RCLONE_CONFIG_BENCH_PROVIDER"] = "Ceph";
        psi.Environment["RCLONE_CONFIG_BENCH_ENDPOINT"] = settings.Endpoint;
        psi.Environment["RCLONE_CONFIG_BENCH_ACCESS_KEY_ID"] = settings.AccessKey;
        psi.Environment["RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY"] = settings.SecretKey;
        psi.Environment["RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE"] = "true";
        // rclone's AWS SDK refuses a custom CA bundle with its own HTTP transport; plain http needs none.
        psi.Environment.Remove("AWS_CA_BUNDLE");
    }

    public static string[] TransferFlags(BenchSettings settings) =>
    [
        "--s3-upload-concurrency", settings.MultipartThreads.ToString(CultureInfo.InvariantCulture),
        "--s3-chunk-size", $"{settings.PartSize / (1024 * 1024)}M",
        "--s3-upload-cutoff", $"{settings.MultipartThreshold / (1024 * 1024)}M",
        "--multi-thread-streams", settings.MultipartThreads.ToString(CultureInfo.InvariantCulture),
    ];
}
