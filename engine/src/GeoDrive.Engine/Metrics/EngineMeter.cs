using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Engine.Metrics;

/// <summary>
/// The engine's instruments, on the Meter "GeoDrive" (docs/metrics.md lists each: name, type, unit, tags). Readings that
/// the engine already keeps for Get-CloudDriveStatus (files by state, queues, transfer totals, bytes in flight) and the
/// store's endpoint health are observed when a reader collects, never counted twice; what exists only as it happens
/// (errors by id, upload and recall durations, throttle waits) is recorded then. Every measurement carries the drive's
/// name as <c>drive</c>. The engine depends on System.Diagnostics.Metrics only; the host chooses an exporter
/// (docs/decisions/0023-metrics.md).
/// </summary>
public sealed class EngineMeter : IDisposable
{
    public const string MeterName = "GeoDrive";

    // Seconds, from a small file on loopback (milliseconds) to a large one over a slow link (minutes).
    private static readonly double[] DurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

    private readonly ConcurrentDictionary<DriveMetrics, byte> _drives = new();

    /// <summary>The meter every drive of the process reports on (the service's); tests may make their own.</summary>
    public static EngineMeter Shared { get; } = new();

    public EngineMeter(IMeterFactory? factory = null)
    {
        Meter = factory?.Create(MeterName) ?? new Meter(MeterName);

        Errors = Meter.CreateCounter<long>("geodrive.errors", "{error}",
            "Errors recorded in the drives' event logs, by error id (docs/errors.md).");
        UploadDuration = Meter.CreateHistogram<double>("geodrive.upload.duration", "s",
            "From a worker taking a file to its object verified in the bucket (hash, compare, send, verify).",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });
        RecallDuration = Meter.CreateHistogram<double>("geodrive.recall.duration", "s",
            "From a stub's recall starting to its bytes verified and on disk.",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });
        ThrottleWait = Meter.CreateCounter<double>("geodrive.throttle.wait", "s",
            "Waits the policy's throttle imposed on transfers, by direction (upload, download); summed over concurrent transfers.");

        Meter.CreateObservableGauge("geodrive.files", () => Observe(FilesByState), "{file}",
            "Files in the drive's index by state (Dirty, Uploading, Cached, Stubbed, Recalling, Excluded).");
        Meter.CreateObservableGauge("geodrive.upload.queue", () => Observe(d => [new((long)d.UploadQueueLength, d.Tag)]), "{file}",
            "Settled files waiting for an upload worker.");
        Meter.CreateObservableGauge("geodrive.bucket_changes.owed", () => Observe(d => [new((long)d.OwedBucketChangeCount, d.Tag)]), "{change}",
            "Changes owed to the bucket by its journal: deletes, renames' copies, aborts of multipart uploads.");
        Meter.CreateObservableGauge("geodrive.transfer.in_flight", () => Observe(InFlight), "By",
            "Bytes of the transfers under way, by direction (upload, download).");
        Meter.CreateObservableCounter("geodrive.upload.files", () => Observe(d => [new(d.Totals().UploadedFiles, d.Tag)]), "{file}",
            "Files uploaded and verified in the bucket since the drive started.");
        Meter.CreateObservableCounter("geodrive.upload.bytes", () => Observe(d => [new(d.Totals().UploadedBytes, d.Tag)]), "By",
            "Bytes of the files uploaded and verified since the drive started.");
        Meter.CreateObservableCounter("geodrive.recall.files", () => Observe(d => [new(d.Totals().RecalledFiles, d.Tag)]), "{file}",
            "Stubs recalled and verified since the drive started.");
        Meter.CreateObservableCounter("geodrive.recall.bytes", () => Observe(d => [new(d.Totals().RecalledBytes, d.Tag)]), "By",
            "Bytes of the stubs recalled and verified since the drive started.");
        Meter.CreateObservableGauge("geodrive.endpoint.up", () => Observe(d => EndpointReadings(d, e => e.Up ? 1L : 0L)), "1",
            "1 while the endpoint takes requests, 0 while it sits out after failures or is known not to answer.");
        Meter.CreateObservableGauge("geodrive.endpoint.failures", () => Observe(d => EndpointReadings(d, e => e.Failures)), "{failure}",
            "Consecutive failures of the endpoint (0 once it answers).");
        Meter.CreateObservableGauge("geodrive.bucket.silent", () => Observe(d => [new(d.BucketSilent ? 1L : 0L, d.Tag)]), "1",
            "1 while the bucket did not answer a check (listings and opens go on with the cache as it is).");
        Meter.CreateObservableGauge("geodrive.uploads.suspended", () => Observe(d => [new(d.UploadsSuspended ? 1L : 0L, d.Tag)]), "1",
            "1 while the drive's uploads are suspended (Suspend-CloudDrive).");
    }

    public Meter Meter { get; }

    internal Counter<long> Errors { get; }

    internal Histogram<double> UploadDuration { get; }

    internal Histogram<double> RecallDuration { get; }

    internal Counter<double> ThrottleWait { get; }

    /// <summary>Reports <paramref name="drive"/> on this meter until the returned object is disposed.</summary>
    public DriveMetrics Track(DriveEngine drive)
    {
        var metrics = new DriveMetrics(this, drive);
        _drives[metrics] = 0;
        return metrics;
    }

    internal void Forget(DriveMetrics metrics) => _drives.TryRemove(metrics, out _);

    public void Dispose() => Meter.Dispose();

    /// <summary>Every tracked drive's readings; a drive going away while it is read is left out of this collection.</summary>
    private List<Measurement<long>> Observe(Func<DriveMetrics, IEnumerable<Measurement<long>>> read)
    {
        var all = new List<Measurement<long>>();
        foreach (var drive in _drives.Keys)
        {
            try
            {
                all.AddRange(read(drive));
            }
            catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException)
            {
                // Its index closed under the collection (the drive was being removed or stopped).
            }
        }
        return all;
    }

    private static IEnumerable<Measurement<long>> FilesByState(DriveMetrics drive) =>
        drive.CountByState().Select(pair => new Measurement<long>(pair.Value, drive.Tag, new("state", pair.Key.ToString())));

    private static IEnumerable<Measurement<long>> InFlight(DriveMetrics drive)
    {
        var totals = drive.Totals();
        return [new(totals.UploadingBytes, drive.Tag, new("direction", "upload")), new(totals.RecallingBytes, drive.Tag, new("direction", "download"))];
    }

    private static IEnumerable<Measurement<long>> EndpointReadings(DriveMetrics drive, Func<EndpointHealth, long> value) =>
        drive.Endpoints().Select(e => new Measurement<long>(value(e), drive.Tag, new("endpoint", e.Endpoint)));
}
