using System.Diagnostics.Metrics;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Metrics;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The engine's instruments (docs/metrics.md) as a reader sees them, through a MeterListener on a meter of the test's own:
/// observed readings come from the drive's own totals and index, events are measured as they happen, all tagged with the drive.
/// </summary>
public sealed class EngineMetricsTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string DownloadThrottled = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: metrics-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          throttle: { download: 1MB/s }
        """;

    private readonly EngineMeter _meter = new();
    private readonly MeterListener _listener = new();
    // Observed at a collection (Observe) apart from what the drive records as it happens (Recorded).
    private readonly List<Reading> _readings = [];
    private readonly List<Reading> _recorded = [];
    private DriveRig _rig = null!;

    private sealed record Reading(string Instrument, double Value, IReadOnlyDictionary<string, object?> Tags);

    public Task InitializeAsync()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter == _meter.Meter)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.Start();
        _rig = new DriveRig(s3, DownloadThrottled, meter: _meter);
        return _rig.Engine.StartAsync();
    }

    public async Task DisposeAsync()
    {
        _listener.Dispose();
        await _rig.DisposeAsync();
        _meter.Dispose();
    }

    private void Add(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var reading = new Reading(instrument.Name, value, tags.ToArray().ToDictionary(t => t.Key, t => t.Value));
        lock (_readings)
        {
            (instrument.IsObservable ? _readings : _recorded).Add(reading);
        }
    }

    /// <summary>What a collection now reads from the observed instruments.</summary>
    private List<Reading> Observe()
    {
        lock (_readings)
        {
            _readings.Clear();
        }
        _listener.RecordObservableInstruments();
        lock (_readings)
        {
            return [.. _readings];
        }
    }

    private List<Reading> Recorded(string instrument)
    {
        lock (_readings)
        {
            return _recorded.Where(r => r.Instrument == instrument).ToList();
        }
    }

    private static double One(List<Reading> readings, string instrument, params (string Key, string Value)[] tags) =>
        readings.Single(r => r.Instrument == instrument && tags.All(t => Equals(r.Tags.GetValueOrDefault(t.Key), t.Value))).Value;

    [Fact]
    public async Task Uploads_and_recalls_are_read_from_the_drives_own_totals_and_each_is_timed()
    {
        await _rig.WriteAsync("a.bin", DriveRig.RandomBytes(1_000, 1));
        await _rig.WriteAsync("b.bin", DriveRig.RandomBytes(1_500_000, 2));
        await _rig.Engine.UploadAsync("a.bin");
        await _rig.Engine.UploadAsync("b.bin");
        await _rig.Engine.StubAsync("b.bin");

        var beforeRecall = Observe();
        Assert.Equal(1, One(beforeRecall, "geodrive.files", ("state", "Stubbed")));
        Assert.Equal(1, One(beforeRecall, "geodrive.files", ("state", "Cached")));
        Assert.Equal(0, One(beforeRecall, "geodrive.recall.files"));

        await _rig.ReadAsync("b.bin");

        var now = Observe();
        Assert.Equal(2, One(now, "geodrive.upload.files"));
        Assert.Equal(1_501_000, One(now, "geodrive.upload.bytes"));
        Assert.Equal(1, One(now, "geodrive.recall.files"));
        Assert.Equal(1_500_000, One(now, "geodrive.recall.bytes"));
        Assert.Equal(2, One(now, "geodrive.files", ("state", "Cached")));
        Assert.Equal(0, One(now, "geodrive.files", ("state", "Stubbed")));
        Assert.Equal(0, One(now, "geodrive.transfer.in_flight", ("direction", "upload")));
        Assert.Equal(2, Recorded("geodrive.upload.duration").Count);
        Assert.Single(Recorded("geodrive.recall.duration"));
        Assert.All(Recorded("geodrive.upload.duration"), r => Assert.InRange(r.Value, 0, 60));
        // 1.5 MB under a 1 MB/s download limit: the bucket holds at most a second of it, however long the machine took to
        // reach the recall or the GET to answer (400 KB fitted in what a loaded CI gathered meanwhile, and no wait was told),
        // so the rest waits; together the waits never exceed the 1.5 s the whole file takes at that rate.
        Assert.InRange(Recorded("geodrive.throttle.wait").Where(r => Equals(r.Tags["direction"], "download")).Sum(r => r.Value), 0.1, 1.55);
        Assert.All(now.Concat(Recorded("geodrive.upload.duration")), r => Assert.Equal("test", r.Tags["drive"]));
    }

    [Fact]
    public void Error_events_are_counted_by_their_id_and_other_events_not_at_all()
    {
        _rig.Engine.RecordEvent(DriveEventKind.Error, "a.txt", "A peer did not answer.", ErrorIds.PeerUnreachable);
        _rig.Engine.RecordEvent(DriveEventKind.Error, "b.txt", "A peer did not answer.", ErrorIds.PeerUnreachable);
        _rig.Engine.RecordEvent(DriveEventKind.Service, null, "Something happened.");

        var errors = Recorded("geodrive.errors");

        Assert.Equal(2, errors.Count);
        Assert.All(errors, e => Assert.Equal((1.0, "PeerUnreachable", (object?)"test"), (e.Value, (string)e.Tags["error_id"]!, e.Tags["drive"])));
    }

    [Fact]
    public void The_endpoint_is_reported_up_by_its_address_and_the_queues_empty()
    {
        var now = Observe();

        Assert.Equal(1, One(now, "geodrive.endpoint.up", ("endpoint", new Uri(s3.Endpoint).GetLeftPart(UriPartial.Authority))));
        Assert.Equal(0, One(now, "geodrive.endpoint.failures"));
        Assert.Equal(0, One(now, "geodrive.upload.queue"));
        Assert.Equal(0, One(now, "geodrive.bucket_changes.owed"));
        Assert.Equal(0, One(now, "geodrive.bucket.silent"));
        Assert.Equal(0, One(now, "geodrive.uploads.suspended"));
    }

    [Fact]
    public async Task A_drive_stopped_is_no_longer_read_and_its_successor_is_read_once()
    {
        await _rig.WriteAsync("a.bin", DriveRig.RandomBytes(1_000, 1));
        await _rig.Engine.UploadAsync("a.bin");

        await _rig.RestartAsync();

        var now = Observe();
        // Totals are the running drive's, since its start; the index's counts carry over.
        Assert.Equal(0, One(now, "geodrive.upload.files"));
        Assert.Equal(1, One(now, "geodrive.files", ("state", "Cached")));
    }
}
