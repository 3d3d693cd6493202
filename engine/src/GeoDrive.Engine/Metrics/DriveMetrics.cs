using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;

namespace GeoDrive.Engine.Metrics;

/// <summary>
/// One drive on an <see cref="EngineMeter"/>: what the drive records as it happens (errors, durations, throttle waits),
/// and the readings the meter observes from it at each collection. Disposed with the drive.
/// </summary>
public sealed class DriveMetrics : IDisposable
{
    private readonly EngineMeter _meter;
    private readonly DriveEngine _drive;

    internal DriveMetrics(EngineMeter meter, DriveEngine drive)
    {
        _meter = meter;
        _drive = drive;
        Tag = new("drive", drive.Name);
    }

    internal KeyValuePair<string, object?> Tag { get; }

    /// <summary>An event with an error id was recorded.</summary>
    public void Error(string errorId) => _meter.Errors.Add(1, Tag, new("error_id", errorId));

    /// <summary>A file's upload was verified, <paramref name="took"/> after a worker took it.</summary>
    public void UploadTook(TimeSpan took) => _meter.UploadDuration.Record(took.TotalSeconds, Tag);

    /// <summary>A stub's bytes came back verified, <paramref name="took"/> after its recall started.</summary>
    public void RecallTook(TimeSpan took) => _meter.RecallDuration.Record(took.TotalSeconds, Tag);

    /// <summary>The throttle held a transfer in <paramref name="direction"/> ("upload" or "download") for <paramref name="wait"/>.</summary>
    public void ThrottleWaited(string direction, TimeSpan wait) => _meter.ThrottleWait.Add(wait.TotalSeconds, Tag, new("direction", direction));

    internal IReadOnlyDictionary<FileState, long> CountByState() => _drive.CountByState();

    internal TransferTotals Totals() => _drive.Transfers.Totals();

    internal int UploadQueueLength => _drive.UploadQueueLength;

    internal int OwedBucketChangeCount => _drive.OwedBucketChangeCount;

    internal bool BucketSilent => _drive.BucketSilent;

    internal bool UploadsSuspended => _drive.UploadsSuspended;

    internal IReadOnlyList<EndpointHealth> Endpoints() => _drive.EndpointHealth();

    public void Dispose() => _meter.Forget(this);
}
