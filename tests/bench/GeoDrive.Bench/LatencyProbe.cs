using System.Diagnostics;
using System.Globalization;
using System.Text;
using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;

namespace GeoDrive.Bench;

/// <summary>
/// What a user waits for through a mounted client with the S3 server a round trip away (issue 13): listing a
/// folder of 1,000 files, opening a file whose bytes are in the bucket only (a stub; rclone's cold cache),
/// creating 1,000 files one after another as a copy does, and how long after the last create the last one is in
/// the bucket, and renaming that folder once its files are uploaded (a user's rename must not wait for the bucket's
/// copies). The server sits behind a <see cref="DelayProxy"/> that adds the round trip; the probe measures
/// the round trip it really added (a small LIST, through the proxy and straight, the median of 20 each).
/// </summary>
internal static class LatencyProbe
{
    private const int Files = 1000;

    public static async Task<string> RunAsync(BenchOptions options, AmazonS3Client admin, string bucket, IReadOnlyList<double> roundTripsMs,
        Func<string, BenchSettings, Task<IBenchClient>> create, Func<string, Task> emptyPrefix)
    {
        var folder = new Dataset("1KB", Files, 1000);
        folder.Generate(options.Work);
        var table = new StringBuilder();
        table.AppendLine("| round trip asked (ms) | added, measured (ms) | client | list 1,000 files (ms) | open a file not local (ms) | create 1,000 files (ms) | per create (ms) | last in the bucket after the last create (ms) | rename the folder of 1,000 uploaded files (ms) |");
        table.AppendLine("|---|---|---|---|---|---|---|---|---|");
        var run = 0;
        foreach (var roundTrip in roundTripsMs)
        {
            await using var proxy = new DelayProxy(new Uri(options.Endpoint), TimeSpan.FromMilliseconds(roundTrip / 2));
            var added = await AddedRoundTripAsync(options, proxy.Endpoint, admin, bucket);
            var settings = new BenchSettings(options.Work, proxy.Endpoint, options.AccessKey, options.SecretKey, options.Threads[0], options.MultipartThreads[0],
                PartSize: 16L * 1024 * 1024, MultipartThreshold: 64L * 1024 * 1024);
            foreach (var name in options.Clients.Where(c => c is "geodrive" or "rclone-mount"))
            {
                var prefix = $"latency{++run}";
                await using var client = await create(name, settings);
                await client.SeedAsync(prefix, folder.RelativePaths.ToList());
                var mount = client.MountFolder(prefix)!;
                var clock = Stopwatch.StartNew();
                var listed = Directory.GetFiles(Path.Combine(mount, folder.Name)).Length;
                var list = clock.Elapsed.TotalMilliseconds;
                if (listed != Files)
                {
                    throw new InvalidOperationException($"{name}: the folder lists {listed} files, not {Files}");
                }
                clock.Restart();
                await using (var stub = File.OpenRead(Path.Combine(mount, folder.Name, "f00500.bin")))
                {
                    stub.ReadByte();
                }
                var open = clock.Elapsed.TotalMilliseconds;
                var bytes = new byte[1000];
                Directory.CreateDirectory(Path.Combine(mount, "new"));
                clock.Restart();
                for (var i = 0; i < Files; i++)
                {
                    await File.WriteAllBytesAsync(Path.Combine(mount, "new", $"f{i:00000}.bin"), bytes);
                }
                var creates = clock.Elapsed.TotalMilliseconds;
                clock.Restart();
                await WaitListedAsync(admin, bucket, $"{prefix}/new/", Files);
                var inBucket = clock.Elapsed.TotalMilliseconds;
                clock.Restart();
                Directory.Move(Path.Combine(mount, "new"), Path.Combine(mount, "renamed"));
                var rename = clock.Elapsed.TotalMilliseconds;
                table.AppendLine(CultureInfo.InvariantCulture,
                    $"| {roundTrip:0.#} | {added:0.0} | {name} | {list:0} | {open:0} | {creates:0} | {creates / Files:0.00} | {inBucket:0} | {rename:0} |");
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  latency {roundTrip} ms (+{added:0.0}): {name} list {list:0} ms, open {open:0} ms, create {creates:0} ms, in bucket +{inBucket:0} ms, rename folder {rename:0} ms"));
                await client.FinishAsync(prefix);
                await emptyPrefix(prefix + "/");
            }
        }
        return table.ToString();
    }

    /// <summary>The round trip the proxy adds to a small request: the median of 20 through it less the median of 20 straight.</summary>
    private static async Task<double> AddedRoundTripAsync(BenchOptions options, string proxied, AmazonS3Client direct, string bucket)
    {
        using var through = new AmazonS3Client(new BasicAWSCredentials(options.AccessKey, options.SecretKey), new AmazonS3Config
        {
            ServiceURL = proxied,
            ForcePathStyle = true,
            AuthenticationRegion = "us-east-1",
        });
        return await MedianAsync(through, bucket) - await MedianAsync(direct, bucket);
    }

    private static async Task<double> MedianAsync(AmazonS3Client s3, string bucket)
    {
        var times = new List<double>();
        for (var i = 0; i < 21; i++)
        {
            var clock = Stopwatch.StartNew();
            await s3.ListObjectsV2Async(new ListObjectsV2Request { BucketName = bucket, MaxKeys = 1, Prefix = "no-such-prefix/" });
            // The first opens the connection: not counted.
            if (i > 0)
            {
                times.Add(clock.Elapsed.TotalMilliseconds);
            }
        }
        return times.Order().ElementAt(times.Count / 2);
    }

    private static async Task WaitListedAsync(AmazonS3Client s3, string bucket, string prefix, int expected)
    {
        var deadline = DateTime.UtcNow.AddMinutes(5);
        while (true)
        {
            var count = 0;
            var request = new ListObjectsV2Request { BucketName = bucket, Prefix = prefix };
            ListObjectsV2Response page;
            do
            {
                page = await s3.ListObjectsV2Async(request);
                count += page.S3Objects?.Count ?? 0;
                request.ContinuationToken = page.NextContinuationToken;
            }
            while (page.IsTruncated == true);
            if (count >= expected)
            {
                return;
            }
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{count} of {expected} objects under {prefix} after 5 min");
            }
            await Task.Delay(20);
        }
    }
}
