using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Storage.S3;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The upload pipeline (queue, workers, one slot per path) on the real test server. Where a test must
/// catch an upload in flight, PUTs pass a gate in front of the real store (fault injection: the
/// names say "held").
/// </summary>
public sealed class UploadPipelineTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const string SettleZero = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: pipeline-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    [Fact]
    public async Task A_file_written_while_its_upload_is_held_stays_Dirty_and_ends_Cached_with_the_final_bytes()
    {
        HeldPutsStore held = null!;
        await using var rig = new DriveRig(s3, SettleZero, storeInFront: s => held = new HeldPutsStore(s));
        var first = DriveRig.RandomBytes(50_000, 1);
        var last = DriveRig.RandomBytes(70_000, 2);

        await rig.WriteAsync("doc.bin", first);
        await held.PutStarted("doc.bin");
        await rig.WriteAsync("doc.bin", last);
        Assert.Equal(FileState.Dirty, rig.StateOf("doc.bin"));

        held.Release();
        await rig.Engine.WhenUploadsIdleAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("doc.bin"));
        Assert.Equal(last, await rig.ObjectBytesAsync("doc.bin"));
        Assert.Equal(last, await File.ReadAllBytesAsync(rig.Local("doc.bin")));
        Assert.Equal(2, held.Puts("doc.bin"));
    }

    [Fact]
    public async Task A_file_closed_again_and_again_while_queued_holds_one_place_in_the_queue_and_goes_up_once_with_its_last_bytes()
    {
        HeldPutsStore held = null!;
        await using var rig = new DriveRig(s3, SettleZero, uploadThreads: 1, storeInFront: s => held = new HeldPutsStore(s));

        await rig.WriteAsync("first.bin", [1]);
        await held.PutStarted("first.bin");
        byte[] last = [];
        for (var i = 0; i < 5; i++)
        {
            last = DriveRig.RandomBytes(1000 + i, i);
            await rig.WriteAsync("busy.bin", last);
            await rig.WriteAsync("other.bin", last);
        }
        // A stepping tick finds both settled and Dirty: it queues neither again, and returns once the pipeline is idle.
        var tick = rig.Engine.TickAsync();

        Assert.Equal(["busy.bin", "first.bin", "other.bin"], rig.Engine.PathsInUploadPipeline.Order(StringComparer.Ordinal));
        Assert.Equal(2, rig.Engine.UploadQueueLength);

        held.Release();
        Assert.Equal(3, (await tick).Uploaded);
        Assert.Equal((1, 1), (held.Puts("busy.bin"), held.Puts("other.bin")));
        Assert.Equal(last, await rig.ObjectBytesAsync("busy.bin"));
        Assert.All(["first.bin", "busy.bin", "other.bin"], p => Assert.Equal(FileState.Cached, rig.StateOf(p)));
    }

    [Fact]
    public async Task Suspend_stops_queued_uploads_the_one_in_flight_finishes_and_Resume_sends_the_rest()
    {
        HeldPutsStore held = null!;
        await using var rig = new DriveRig(s3, SettleZero, uploadThreads: 1, storeInFront: s => held = new HeldPutsStore(s));
        await rig.WriteAsync("in-flight.bin", [1, 2, 3]);
        await held.PutStarted("in-flight.bin");
        await rig.WriteAsync("queued.bin", [4, 5, 6]);

        rig.Engine.UploadsSuspended = true;
        held.Release();
        await rig.Engine.WhenUploadsIdleAsync();
        await rig.WriteAsync("written-while-suspended.bin", [7]);
        await rig.Engine.TickAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("in-flight.bin"));
        Assert.Equal(FileState.Dirty, rig.StateOf("queued.bin"));
        Assert.Equal(FileState.Dirty, rig.StateOf("written-while-suspended.bin"));
        Assert.Null(await rig.Store.HeadAsync("queued.bin"));
        Assert.Empty(rig.Engine.PathsInUploadPipeline);

        rig.Engine.UploadsSuspended = false;
        var resumed = await rig.Engine.TickAsync();
        Assert.Equal(2, resumed.Uploaded);
        Assert.Equal([4, 5, 6], await rig.ObjectBytesAsync("queued.bin"));
    }

    [Fact]
    public async Task Uploads_through_injected_resets_SlowDowns_and_InternalErrors_end_byte_exact_with_no_multipart_upload_left_open()
    {
        using var proxy = new FaultProxy(s3.Endpoint);
        await using var rig = new DriveRig(s3, SettleZero, multipartThreshold: 8L << 20, endpoint: proxy.Endpoint);
        var files = new Dictionary<string, byte[]>
        {
            ["big/a.bin"] = DriveRig.RandomBytes((3 * 8 << 20) + 1, 1),
            ["big/b.bin"] = DriveRig.RandomBytes((8 << 20) + 1, 2),
            ["small/c.bin"] = DriveRig.RandomBytes(10_000, 3),
        };

        // Enough resets that a part may exhaust its retries: a failed multipart upload is aborted and goes again later.
        proxy.InjectSlowDowns(4);
        proxy.InjectInternalErrors(4);
        proxy.InjectResets(12);
        foreach (var (path, bytes) in files)
        {
            await rig.WriteAsync(path, bytes);
        }
        await rig.Engine.WhenUploadsIdleAsync();
        for (var round = 0; round < 20 && files.Keys.Any(p => rig.StateOf(p) != FileState.Cached); round++)
        {
            rig.Clock.Advance(TimeSpan.FromMinutes(10));
            await rig.Engine.TickAsync();
        }

        foreach (var (path, bytes) in files)
        {
            Assert.Equal(FileState.Cached, rig.StateOf(path));
            Assert.Equal(bytes, await rig.ObjectBytesAsync(path));
        }
        Assert.True(proxy.ResetsSent > 0 && proxy.InternalErrorsSent > 0, $"faults that reached the transfers: {proxy.ResetsSent} resets, {proxy.InternalErrorsSent} InternalError");
        Assert.Empty(await rig.Store.ListOpenMultipartUploadsAsync());
    }

    /// <summary>The real store behind a gate: PUTs wait until released (fault injection: an upload caught in flight).</summary>
    private sealed class HeldPutsStore(IObjectStore inner) : ForwardingStore(inner)
    {
        private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ConcurrentDictionary<string, TaskCompletionSource> _started = new();
        private readonly ConcurrentDictionary<string, int> _puts = new();

        public void Release() => _released.TrySetResult();

        public Task PutStarted(string key) => Started(key).Task.WaitAsync(TimeSpan.FromSeconds(60));

        public int Puts(string key) => _puts.GetValueOrDefault(key);

        private TaskCompletionSource Started(string key) => _started.GetOrAdd(key, _ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));

        public override async Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default)
        {
            _puts.AddOrUpdate(key, 1, (_, n) => n + 1);
            Started(key).TrySetResult();
            await _released.Task.WaitAsync(cancellationToken);
            return await base.PutAsync(key, content, length, metadata, observer, condition, contentSha256, cancellationToken);
        }
    }
}
