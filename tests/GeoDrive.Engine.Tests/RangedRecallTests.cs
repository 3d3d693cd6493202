using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Recall of large files as parallel ranged GETs, on Ceph (moto reads the whole object for every
/// ranged GET): byte-exact at the multipart boundaries, retried through faults, never a half-file
/// taken for the file, and readable range by range while it arrives (streaming recall).
/// </summary>
public sealed class RangedRecallTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>, IAsyncLifetime
{
    private const int Part = 5 << 20;

    private static string Policy(string? download = null) => $$"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: ranged-recall }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
          transfer: { restoreThreads: 1, multipart: { threshold: 5MiB, partSize: 5MiB, restoreThreads: 3 } }
        {{(download is null ? "" : $"  throttle: {{ download: {download} }}")}}
        """;

    private readonly List<IAsyncDisposable> _owned = [];

    public Task InitializeAsync() => Task.CompletedTask;

    // IAsyncLifetime, not IAsyncDisposable: xunit 2 never called the latter on a test class, and every
    // rig of this class was left in /tmp (~100 MB a run).
    public async Task DisposeAsync()
    {
        foreach (var owned in _owned)
        {
            await owned.DisposeAsync();
        }
    }

    private async Task<DriveRig> RigAsync(string? download = null, string? endpoint = null)
    {
        var rig = new DriveRig(ceph, Policy(download), endpoint: endpoint);
        _owned.Add(rig);
        await rig.Engine.StartAsync();
        return rig;
    }

    private static async Task<byte[]> StubbedFileAsync(DriveRig rig, string path, int size)
    {
        var content = DriveRig.RandomBytes(size, seed: size);
        await rig.WriteAsync(path, content);
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync(path)).State);
        Assert.Equal(FileState.Stubbed, (await rig.Engine.StubAsync(path)).State);
        return content;
    }

    /// <summary>Waits (bounded) until some but not all of a recalling file's bytes are in its cache file.</summary>
    private static async Task WaitUntilPartlyRecalledAsync(DriveRig rig, string path)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (rig.Engine.RecallProgress(path) is not { Present: > 0 })
        {
            Assert.True(DateTime.UtcNow < deadline, "the recall never started");
            await Task.Delay(5);
        }
    }

    [Theory]
    [InlineData(Part - 1, 1)]
    [InlineData(Part, 1)]
    [InlineData(Part + 1, 2)]
    [InlineData(3 * Part + 1, 4)]
    public async Task A_recall_is_byte_exact_at_the_multipart_boundaries(int size, int ranges)
    {
        var rig = await RigAsync();
        var content = await StubbedFileAsync(rig, "big.bin", size);

        var entry = await rig.Engine.RecallAsync("big.bin");

        Assert.Equal(FileState.Cached, entry.State);
        Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local("big.bin")));
        var recalled = Assert.Single(rig.Engine.ReadEvents(kind: DriveEventKind.Recall));
        Assert.Equal(ranges > 1, recalled.Message.Contains($"in {ranges} ranges", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Resets_SlowDowns_and_InternalErrors_in_the_middle_of_a_ranged_recall_are_retried_without_corruption()
    {
        using var proxy = new FaultProxy(ceph.Endpoint);
        var rig = await RigAsync(download: "4MB/s", endpoint: proxy.Endpoint);
        var content = await StubbedFileAsync(rig, "faulty.bin", 3 * Part + 1);

        var recall = rig.Engine.RecallAsync("faulty.bin");
        await WaitUntilPartlyRecalledAsync(rig, "faulty.bin");
        // Cuts the ranges in flight mid-body; their next connections are reset or told to slow down.
        proxy.InjectResets(2);
        proxy.InjectSlowDowns(2);
        proxy.InjectInternalErrors(2);
        var entry = await recall;

        Assert.True(proxy.ResetsSent + proxy.SlowDownsSent + proxy.InternalErrorsSent > 0);
        Assert.Equal(FileState.Cached, entry.State);
        Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local("faulty.bin")));
    }

    [Fact]
    public async Task A_recall_stopped_half_way_leaves_a_clean_stub_that_recalls_whole_later()
    {
        var rig = await RigAsync(download: "4MB/s");
        var content = await StubbedFileAsync(rig, "stopped.bin", 3 * Part + 1);
        using var stop = new CancellationTokenSource();

        var recall = rig.Engine.RecallAsync("stopped.bin", stop.Token);
        await WaitUntilPartlyRecalledAsync(rig, "stopped.bin");
        await stop.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => recall);
        Assert.Equal(FileState.Stubbed, rig.StateOf("stopped.bin"));
        Assert.Equal(0, rig.AllocatedBlocks("stopped.bin"));
        Assert.Equal(content.Length, new FileInfo(rig.Local("stopped.bin")).Length);
        Assert.Equal(content, await rig.ReadAsync("stopped.bin"));
        Assert.Equal(FileState.Cached, rig.StateOf("stopped.bin"));
    }

    [Fact]
    public async Task An_object_replaced_by_other_bytes_is_refused_after_a_ranged_recall_and_the_file_stays_a_stub()
    {
        var rig = await RigAsync();
        await StubbedFileAsync(rig, "swapped.bin", 2 * Part + 7);
        // Same size, other bytes, and no checksum of ours in its metadata: only the recall's hash can tell.
        await rig.S3.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest
        {
            BucketName = rig.Bucket, Key = "swapped.bin", InputStream = new MemoryStream(DriveRig.RandomBytes(2 * Part + 7, seed: 5)),
        });

        await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => rig.Engine.RecallAsync("swapped.bin"));

        Assert.Equal(FileState.Stubbed, rig.StateOf("swapped.bin"));
        Assert.Equal(0, rig.AllocatedBlocks("swapped.bin"));
    }

    [Fact]
    public async Task A_reader_of_a_recalling_file_gets_its_first_megabyte_while_the_rest_is_still_coming()
    {
        var rig = await RigAsync(download: "4MB/s");
        var content = await StubbedFileAsync(rig, "stream.bin", 3 * Part + 1);

        var decision = await rig.Engine.OpenStreamingAsync("stream.bin", rig.Caller, OpenIntent.Read);
        Assert.Equal(OpenDecision.Recalling, decision);
        await rig.Engine.WaitForRangeAsync("stream.bin", 0, 1 << 20);

        Assert.Equal(FileState.Recalling, rig.StateOf("stream.bin"));
        Assert.True(rig.Engine.RecallProgress("stream.bin")!.Value.Present < content.Length);
        await using (var file = new FileStream(rig.Local("stream.bin"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            var first = new byte[1 << 20];
            await file.ReadExactlyAsync(first);
            Assert.Equal(content.AsSpan(0, 1 << 20).ToArray(), first);
        }

        // A read far ahead is served next, before the ranges in between.
        await rig.Engine.WaitForRangeAsync("stream.bin", 3L * Part, 1);
        Assert.Equal(FileState.Cached, (await rig.Engine.RecallAsync("stream.bin")).State);
        await rig.Engine.ClosedAsync("stream.bin", rig.Caller, modified: false);
        Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local("stream.bin")));
    }

    [Fact]
    public async Task A_reader_of_a_recall_that_fails_verification_gets_an_error_and_the_file_stays_a_stub()
    {
        var rig = await RigAsync();
        await StubbedFileAsync(rig, "bad.bin", 2 * Part + 9);
        // Tampered: other bytes under the checksum of the right ones, so the open's fileSync sees the same version.
        var tampered = new Amazon.S3.Model.PutObjectRequest
        {
            BucketName = rig.Bucket, Key = "bad.bin", InputStream = new MemoryStream(DriveRig.RandomBytes(2 * Part + 9, seed: 6)),
        };
        tampered.Metadata["geodrive-sha256"] = rig.Engine.GetFile("bad.bin")!.Checksum;
        await rig.S3.Client.PutObjectAsync(tampered);

        Assert.Equal(OpenDecision.Recalling, await rig.Engine.OpenStreamingAsync("bad.bin", rig.Caller, OpenIntent.Read));
        var wholeFile = rig.Engine.WaitForRangeAsync("bad.bin", 0, 2 * Part + 9).AsTask();
        await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => rig.Engine.RecallAsync("bad.bin"));

        // Readers still holding the file open are told, now and at every later read.
        await wholeFile.ContinueWith(_ => { }, TaskScheduler.Default);
        await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => rig.Engine.WaitForRangeAsync("bad.bin", 0, 1).AsTask());
        Assert.Equal(FileState.Stubbed, rig.StateOf("bad.bin"));
        Assert.Equal(0, rig.AllocatedBlocks("bad.bin"));
    }

    [Fact]
    public async Task An_open_for_writing_waits_for_the_recall_in_flight()
    {
        var rig = await RigAsync(download: "4MB/s");
        var content = await StubbedFileAsync(rig, "edit.bin", 2 * Part + 3);
        await rig.Engine.OpenStreamingAsync("edit.bin", rig.Caller, OpenIntent.Read);

        var decision = await rig.Engine.OpenStreamingAsync("edit.bin", rig.Caller, OpenIntent.Write);

        Assert.Equal(OpenDecision.Local, decision);
        Assert.Equal(FileState.Cached, rig.StateOf("edit.bin"));
        Assert.Equal(content, await File.ReadAllBytesAsync(rig.Local("edit.bin")));
    }

    [Fact]
    public async Task Bulk_recalls_run_transfer_restoreThreads_at_a_time()
    {
        var rig = await RigAsync(download: "4MB/s");
        await StubbedFileAsync(rig, "one.bin", Part + 1);
        await StubbedFileAsync(rig, "two.bin", Part + 2);

        var first = rig.Engine.RecallAsync("one.bin");
        await WaitUntilPartlyRecalledAsync(rig, "one.bin");
        var second = rig.Engine.RecallAsync("two.bin");

        // restoreThreads: 1 — the second waits for a slot while the first is under way.
        Assert.Equal(FileState.Stubbed, rig.StateOf("two.bin"));
        Assert.Equal(FileState.Recalling, rig.StateOf("one.bin"));
        await Task.WhenAll(first, second);
        Assert.Equal(FileState.Cached, rig.StateOf("two.bin"));
    }
}
