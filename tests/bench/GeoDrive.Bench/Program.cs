using System.Diagnostics;
using System.Globalization;
using System.Text;
using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Bench;

// The transfer benchmark (issue 4; method of the seed's white paper): datasets of one file size each,
// workloads 100 % upload, 100 % restore and mixed, for GeoDrive, rclone and a raw AWSSDK.S3 client on
// the same server in one run, and rclone mount (full VFS cache), the peer doing GeoDrive's own job. Prints a
// table of files/s and MB/s with the ratios GeoDrive/ceiling, GeoDrive/rclone and GeoDrive/rclone mount, and writes CSV and one gnuplot script (and PNG, if gnuplot is there) per workload.
var options = BenchOptions.Parse(args);
if (Array.IndexOf(args, "--report") is var r and >= 0 && r + 1 < args.Length)
{
    // run.sh measures each dataset on a fresh server (see there), then joins the parts' CSVs here.
    await Report.WriteAsync(args[r + 1].Split(',').SelectMany(Report.ReadCsv).ToList(), options.Out);
    return 0;
}
var datasets = Dataset.ForScale(options.Scale).Where(d => options.Datasets is null || options.Datasets.Contains(d.Name)).ToList();
if (args.Contains("--list-datasets"))
{
    Console.WriteLine(string.Join(' ', datasets.Select(d => d.Name)));
    return 0;
}
if (args.Contains("--list-clients"))
{
    // run.sh gives each client of a round a fresh server of its own, in this order.
    Console.WriteLine(string.Join(' ', InTurn(options.Clients, options.Round)));
    return 0;
}
var workloads = Workload.All.Where(w => options.Workloads is null || options.Workloads.Contains(w.Name)).ToList();
Directory.CreateDirectory(options.Out);
Console.WriteLine($"GeoDrive transfer benchmark: scale {options.Scale}, endpoint {options.Endpoint}, threads {string.Join('/', options.Threads)}, multipart threads {string.Join('/', options.MultipartThreads)}");
Console.WriteLine($"machine: {Environment.ProcessorCount} cores, {File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':')[1].Trim()}");

foreach (var dataset in datasets)
{
    dataset.Generate(options.Work);
}

using var admin = new AmazonS3Client(new BasicAWSCredentials(options.AccessKey, options.SecretKey), new AmazonS3Config
{
    ServiceURL = options.Endpoint,
    ForcePathStyle = true,
    AuthenticationRegion = "us-east-1",
    RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
    ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,
});
var bucket = "bench-" + DateTime.UtcNow.ToString("yyyyMMddHHmmss", CultureInfo.InvariantCulture);
await admin.PutBucketAsync(bucket);

if (Array.IndexOf(args, "--probe") is var probe and >= 0 && probe + 1 < args.Length && args[probe + 1] == "latency")
{
    // The latency probe (LatencyProbe): what a user waits for with the server a round trip away.
    var roundTrips = (Array.IndexOf(args, "--round-trips") is var t and >= 0 && t + 1 < args.Length ? args[t + 1] : "1,20")
        .Split(',').Select(v => double.Parse(v, CultureInfo.InvariantCulture)).ToList();
    var latency = await LatencyProbe.RunAsync(options, admin, bucket, roundTrips, CreateAsync, prefix => EmptyPrefixAsync(admin, bucket, prefix));
    Console.WriteLine();
    Console.WriteLine(latency);
    await File.WriteAllTextAsync(Path.Combine(options.Out, "latency.md"), latency);
    return 0;
}

var results = new List<Measurement>();
var runNumber = 0;
foreach (var threads in options.Threads)
{
    foreach (var multipartThreads in options.MultipartThreads)
    {
        var settings = new BenchSettings(options.Work, options.Endpoint, options.AccessKey, options.SecretKey, threads, multipartThreads,
            PartSize: 16L * 1024 * 1024, MultipartThreshold: 64L * 1024 * 1024);
        foreach (var dataset in datasets)
        {
            // A round (run.sh --rounds) takes every client in turn, starting one client further on than the round before, so
            // a slow minute of a shared machine does not land on one client only. run.sh runs one client per server.
            foreach (var clientName in InTurn(options.Clients, options.Round))
            {
                await using var client = await CreateAsync(clientName, settings);
                await WarmUpAsync(client, dataset);
                foreach (var workload in workloads)
                {
                    var run = $"run{++runNumber}";
                    var files = dataset.RelativePaths.ToList();
                    var uploadCount = files.Count * workload.UploadPercent / 100;
                    var upload = files.Take(uploadCount).ToList();
                    var restore = files.Skip(uploadCount).ToList();
                    await client.SeedAsync(run, restore);
                    client.ResourceUse();
                    var (busy, server) = (MachineCpu.BusySeconds(), MachineCpu.ServerSeconds());
                    var clock = Stopwatch.StartNew();
                    await client.RunAsync(run, upload, restore);
                    var seconds = clock.Elapsed.TotalSeconds;
                    var use = client.ResourceUse();
                    var m = new Measurement(client.Name, dataset.Name, workload.Name, threads, files.Count, dataset.TotalBytes, seconds,
                        use is { } u ? u.CpuSeconds * 1000 / files.Count : null, use?.PeakRss,
                        (MachineCpu.BusySeconds() - busy) * 1000 / files.Count, (MachineCpu.ServerSeconds() - server) * 1000 / files.Count, options.Round);
                    results.Add(m);
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"  {m.Client,-9} {m.Dataset,-6} {m.Workload,-12} t={threads,-3} mp={multipartThreads} {m.FilesPerSecond,9:0.0} files/s {m.MegabytesPerSecond,8:0.0} MB/s  round {options.Round}"));
                    await CleanUpAsync(client, run);
                }
            }
        }
    }
}

Console.WriteLine();
await Report.WriteAsync(results, options.Out);
return 0;

// One untimed mixed run first, of the dataset's first files (at most 1,000 and 100 MB): the GeoDrive service
// and the raw client are long-running .NET processes, and neither is timed while the JIT compiles its
// first requests (a fresh service spent a quarter of its CPU in the JIT over its first 2,000 uploads, and
// its first 1,000 recalls of 100 KB cost twice the CPU of the next 1,000). rclone, a native binary
// started per copy, gains nothing from it; it runs it all the same.
async Task WarmUpAsync(IBenchClient client, Dataset dataset)
{
    var files = dataset.RelativePaths.Take((int)Math.Min(1_000, 100_000_000 / dataset.Size)).ToList();
    if (files.Count < 2)
    {
        return;
    }
    var (upload, restore) = (files[..(files.Count / 2)], files[(files.Count / 2)..]);
    var run = $"warm{++runNumber}";
    await client.SeedAsync(run, restore);
    await client.RunAsync(run, upload, restore);
    await CleanUpAsync(client, run);
}

// Round r (from 1) starts with the r-th client and wraps around.
static IEnumerable<string> InTurn(string[] clients, int round)
{
    var first = (round - 1) % clients.Length;
    return clients[first..].Concat(clients[..first]);
}

async Task CleanUpAsync(IBenchClient client, string run)
{
    await client.FinishAsync(run);
    await EmptyPrefixAsync(admin, bucket, run + "/");
    var restored = Path.Combine(options.Work, "restore");
    if (Directory.Exists(restored))
    {
        Directory.Delete(restored, recursive: true);
    }
}

async Task<IBenchClient> CreateAsync(string name, BenchSettings settings) => name switch
{
    "raw-sdk" => new RawS3Client(settings, bucket),
    "rclone" => new RcloneClient(settings, bucket),
    "rclone-mount" => new RcloneMountClient(settings, bucket),
    "geodrive" => await GeoDriveRunner.StartAsync(settings, bucket, options.ServiceDll),
    _ => throw new ArgumentException($"unknown client '{name}' (raw-sdk, rclone, rclone-mount, geodrive)"),
};

static async Task EmptyPrefixAsync(AmazonS3Client s3, string bucket, string prefix)
{
    var request = new ListObjectsV2Request { BucketName = bucket, Prefix = prefix };
    while (true)
    {
        var page = await s3.ListObjectsV2Async(request);
        foreach (var batch in (page.S3Objects ?? []).Chunk(500))
        {
            await s3.DeleteObjectsAsync(new DeleteObjectsRequest { BucketName = bucket, Objects = batch.Select(o => new KeyVersion { Key = o.Key }).ToList() });
        }
        if (page.IsTruncated != true)
        {
            return;
        }
        request.ContinuationToken = page.NextContinuationToken;
    }
}

internal sealed record BenchOptions(string Scale, string Endpoint, string AccessKey, string SecretKey, int[] Threads, int[] MultipartThreads,
    string[] Clients, string[]? Workloads, string ServiceDll, string Work, string Out, string[]? Datasets = null, int Round = 1)
{
    public static BenchOptions Parse(string[] args)
    {
        string Arg(string name, string fallback)
        {
            var i = Array.LastIndexOf(args, "--" + name); // the last one wins: run.sh adds --datasets per part
            return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
        }
        int[] Ints(string name, string fallback) => Arg(name, fallback).Split(',').Select(s => int.Parse(s, CultureInfo.InvariantCulture)).ToArray();
        var workloads = Arg("workloads", "");
        return new BenchOptions(
            Arg("scale", "medium"),
            Arg("endpoint", "http://127.0.0.1:7480"),
            Environment.GetEnvironmentVariable("S3_ACCESS_KEY") ?? "test",
            Environment.GetEnvironmentVariable("S3_SECRET_KEY") ?? "testsecret",
            Ints("threads", "16"),
            Ints("multipart-threads", "4"),
            Arg("clients", "raw-sdk,rclone,rclone-mount,geodrive").Split(','),
            workloads.Length == 0 ? null : workloads.Split(','),
            Arg("service", ".artifacts/service/GeoDrive.Service.dll"),
            Arg("work", "/tmp/geodrive-bench"),
            Arg("out", "tests/bench/results"),
            Arg("datasets", "") is { Length: > 0 } only ? only.Split(',') : null,
            Math.Max(1, int.Parse(Arg("round", "1"), CultureInfo.InvariantCulture)));
    }
}

internal static class Report
{
    /// <summary>Prints the table and writes results.md, results.csv and the plots into <paramref name="folder"/>.</summary>
    public static async Task WriteAsync(IReadOnlyList<Measurement> results, string folder)
    {
        Directory.CreateDirectory(folder);
        var table = Table(results);
        Console.WriteLine(table);
        await File.WriteAllTextAsync(Path.Combine(folder, "results.md"), table);
        await File.WriteAllTextAsync(Path.Combine(folder, "results.csv"), Csv(results));
        Plots(results, folder);
    }

    public static string Table(IReadOnlyList<Measurement> results)
    {
        var rounds = results.Select(r => r.Round).Distinct().Count();
        var text = new StringBuilder();
        if (rounds > 1)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"{rounds} rounds, every client on a fresh server of its own, in turn: files/s and CPU are each client's median over the rounds; a ratio is the median of the rounds' ratios (GeoDrive's rate in a round over the peer's in the same round), with the lowest and highest in brackets.");
            text.AppendLine();
        }
        text.AppendLine("| dataset | workload | threads | raw-sdk files/s | rclone files/s | rclone-mount files/s | geodrive files/s | geodrive MB/s | geodrive/ceiling | geodrive/rclone | geodrive/rclone-mount | geodrive CPU s/1000 files | geodrive peak RSS MB |");
        text.AppendLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        foreach (var group in results.GroupBy(r => (r.Dataset, r.Workload, r.Threads)))
        {
            var rows = new Rows(group.ToList());
            text.AppendLine(CultureInfo.InvariantCulture, $"| {group.Key.Dataset} | {group.Key.Workload} | {group.Key.Threads} | {F(rows.Median("raw-sdk", r => r.FilesPerSecond))} | {F(rows.Median("rclone", r => r.FilesPerSecond))} | {F(rows.Median("rclone-mount", r => r.FilesPerSecond))} | {F(rows.Median("geodrive", r => r.FilesPerSecond))} | {F(rows.Median("geodrive", r => r.MegabytesPerSecond))} | {rows.Ratio("raw-sdk")} | {rows.Ratio("rclone")} | {rows.Ratio("rclone-mount")} | {F(rows.Median("geodrive", r => r.CpuSecondsPer1000Files), "0.00")} | {F(rows.Median("geodrive", r => r.PeakRssBytes / 1e6), "0")} |");
        }
        if (results.Any(r => r.MachineCpuSecondsPer1000Files is not null))
        {
            text.AppendLine();
            text.AppendLine("CPU seconds per 1,000 files during each timed run: the whole machine (every core, every process), and of it the S3 server (Ceph's radosgw, ceph-osd, ceph-mon).");
            text.AppendLine();
            text.AppendLine("| dataset | workload | threads | raw-sdk machine | raw-sdk server | rclone machine | rclone server | rclone-mount machine | rclone-mount server | rclone-mount process | geodrive machine | geodrive server | geodrive service |");
            text.AppendLine("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
            foreach (var group in results.GroupBy(r => (r.Dataset, r.Workload, r.Threads)))
            {
                var rows = new Rows(group.ToList());
                string Cpu(string client, Func<Measurement, double?> value) => F(rows.Median(client, value), "0.00");
                text.AppendLine(CultureInfo.InvariantCulture, $"| {group.Key.Dataset} | {group.Key.Workload} | {group.Key.Threads} | {Cpu("raw-sdk", r => r.MachineCpuSecondsPer1000Files)} | {Cpu("raw-sdk", r => r.ServerCpuSecondsPer1000Files)} | {Cpu("rclone", r => r.MachineCpuSecondsPer1000Files)} | {Cpu("rclone", r => r.ServerCpuSecondsPer1000Files)} | {Cpu("rclone-mount", r => r.MachineCpuSecondsPer1000Files)} | {Cpu("rclone-mount", r => r.ServerCpuSecondsPer1000Files)} | {Cpu("rclone-mount", r => r.CpuSecondsPer1000Files)} | {Cpu("geodrive", r => r.MachineCpuSecondsPer1000Files)} | {Cpu("geodrive", r => r.ServerCpuSecondsPer1000Files)} | {Cpu("geodrive", r => r.CpuSecondsPer1000Files)} |");
            }
        }
        return text.ToString();
    }

    private static string F(double? v, string format = "0.0") => v is { } x ? x.ToString(format, CultureInfo.InvariantCulture) : "–";

    /// <summary>One row's measurements: every client's, of every round.</summary>
    private sealed class Rows(IReadOnlyList<Measurement> measurements)
    {
        public double? Median(string client, Func<Measurement, double?> value) =>
            Report.Median(measurements.Where(m => m.Client == client).Select(value).OfType<double>().ToList());

        /// <summary>GeoDrive ÷ the peer: the median of the rounds' ratios, and their range when there are several.</summary>
        public string Ratio(string peer)
        {
            var ratios = measurements.Where(m => m.Client == "geodrive")
                .Select(g => measurements.FirstOrDefault(m => m.Client == peer && m.Round == g.Round) is { } p ? g.FilesPerSecond / p.FilesPerSecond : (double?)null)
                .OfType<double>().ToList();
            return Report.Median(ratios) is not { } median ? "–"
                : ratios.Count == 1 ? F(median, "0.00")
                : $"{F(median, "0.00")} ({F(ratios.Min(), "0.00")}–{F(ratios.Max(), "0.00")})";
        }
    }

    /// <summary>The middle value (the mean of the middle two for an even count), or null for none.</summary>
    public static double? Median(IReadOnlyList<double> values)
    {
        if (values.Count == 0)
        {
            return null;
        }
        var sorted = values.Order().ToList();
        return sorted.Count % 2 == 1 ? sorted[sorted.Count / 2] : (sorted[sorted.Count / 2 - 1] + sorted[sorted.Count / 2]) / 2;
    }

    public static string Csv(IReadOnlyList<Measurement> results)
    {
        var text = new StringBuilder("client,dataset,workload,threads,files,bytes,seconds,files_per_s,mb_per_s,cpu_s_per_1000_files,peak_rss_bytes,machine_cpu_s_per_1000_files,server_cpu_s_per_1000_files,round\n");
        foreach (var r in results)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"{r.Client},{r.Dataset},{r.Workload},{r.Threads},{r.Files},{r.Bytes},{r.Seconds:0.000},{r.FilesPerSecond:0.00},{r.MegabytesPerSecond:0.00},{r.CpuSecondsPer1000Files:0.000},{r.PeakRssBytes},{r.MachineCpuSecondsPer1000Files:0.000},{r.ServerCpuSecondsPer1000Files:0.000},{r.Round}");
        }
        return text.ToString();
    }

    /// <summary>The measurements of a results.csv written by <see cref="Csv"/>.</summary>
    public static IEnumerable<Measurement> ReadCsv(string path) =>
        File.ReadLines(path).Skip(1).Where(l => l.Length > 0).Select(line =>
        {
            var f = line.Split(',');
            double? Optional(string v) => v.Length == 0 ? null : double.Parse(v, CultureInfo.InvariantCulture);
            return new Measurement(f[0], f[1], f[2], int.Parse(f[3], CultureInfo.InvariantCulture), int.Parse(f[4], CultureInfo.InvariantCulture),
                long.Parse(f[5], CultureInfo.InvariantCulture), double.Parse(f[6], CultureInfo.InvariantCulture), Optional(f[9]),
                f[10].Length == 0 ? null : long.Parse(f[10], CultureInfo.InvariantCulture),
                f.Length > 12 ? Optional(f[11]) : null, f.Length > 12 ? Optional(f[12]) : null,
                f.Length > 13 ? int.Parse(f[13], CultureInfo.InvariantCulture) : 1);
        });

    /// <summary>One bar chart per workload (MB/s per dataset, a bar per client), like the seed's figures 11-17.</summary>
    public static void Plots(IReadOnlyList<Measurement> results, string folder)
    {
        foreach (var workload in results.Select(r => r.Workload).Distinct())
        {
            var rows = results.Where(r => r.Workload == workload && r.Threads == results.Max(x => x.Threads)).ToList();
            var clients = rows.Select(r => r.Client).Distinct().ToList();
            var data = new StringBuilder("dataset " + string.Join(' ', clients) + "\n");
            foreach (var dataset in rows.Select(r => r.Dataset).Distinct())
            {
                data.Append(dataset);
                foreach (var client in clients)
                {
                    var rates = rows.Where(r => r.Dataset == dataset && r.Client == client).Select(r => r.MegabytesPerSecond).ToList();
                    data.Append(' ').Append((Median(rates) ?? 0).ToString("0.00", CultureInfo.InvariantCulture));
                }
                data.Append('\n');
            }
            var dat = Path.Combine(folder, $"{workload}.dat");
            File.WriteAllText(dat, data.ToString());
            var script = Path.Combine(folder, $"{workload}.gp");
            File.WriteAllText(script, $"""
                set terminal png size 900,500
                set output '{Path.Combine(folder, workload + ".png")}'
                set title 'GeoDrive transfer benchmark: {workload} (MB/s, higher is better)'
                set style data histograms
                set style histogram clustered gap 1
                set style fill solid 0.8 border -1
                set logscale y
                set ylabel 'MB/s'
                set key top left
                plot for [c=2:{clients.Count + 1}] '{dat}' using c:xtic(1) title columnheader
                """);
            try
            {
                using var gnuplot = Process.Start(new ProcessStartInfo("gnuplot", [script]) { RedirectStandardError = true });
                gnuplot?.WaitForExit();
            }
            catch (System.ComponentModel.Win32Exception)
            {
                Console.Error.WriteLine($"gnuplot is not installed: {script} is left to draw {workload}.png");
            }
        }
    }
}
