using Amazon.S3.Model;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A recall reads one version of the object: every ranged GET is pinned (If-Match), so an object another
/// tool replaces in the middle of a recall restarts it from the new version instead of mixing the two.
/// The replacement is timed by a store in front of the real one (fault injection: it names the moment).
/// </summary>
public sealed class RecallVersionTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    [Fact]
    public async Task An_object_replaced_by_another_tool_between_two_ranges_of_a_recall_is_never_recalled_as_a_mix_of_both()
    {
        ReplacingStore store = null!;
        await using var rig = new DriveRig(s3, DriveRig.FiveMiBRangesOneAtATime, multipartThreshold: 5L << 20, storeInFront: s => store = new ReplacingStore(s));
        var first = DriveRig.RandomBytes(10 << 20, 1);
        var second = DriveRig.RandomBytes(10 << 20, 2);
        // Written by another tool in two parts: no geodrive-sha256, an ETag that is no MD5 — size is all a recall could check.
        await PutInTwoPartsAsync(rig, "scan.tif", first);
        await rig.Engine.BeforeEnumerateAsync("", rig.Caller);
        Assert.Equal(FileState.Stubbed, rig.StateOf("scan.tif"));

        store.AfterFirstGet = () => PutInTwoPartsAsync(rig, "scan.tif", second);
        var read = await rig.ReadAsync("scan.tif");

        Assert.True(read.AsSpan().SequenceEqual(second), read.AsSpan().SequenceEqual(first)
            ? "the recall gave the replaced version" : "the recall mixed the two versions");
        Assert.Equal(FileState.Cached, rig.StateOf("scan.tif"));
    }

    private static async Task PutInTwoPartsAsync(DriveRig rig, string key, byte[] bytes)
    {
        var client = rig.S3.Client;
        var start = await client.InitiateMultipartUploadAsync(new InitiateMultipartUploadRequest { BucketName = rig.Bucket, Key = key });
        var half = bytes.Length / 2;
        var parts = new List<PartETag>();
        for (var number = 1; number <= 2; number++)
        {
            var offset = (number - 1) * half;
            var part = await client.UploadPartAsync(new UploadPartRequest
            {
                BucketName = rig.Bucket, Key = key, UploadId = start.UploadId, PartNumber = number,
                InputStream = new MemoryStream(bytes, offset, number == 1 ? half : bytes.Length - half), PartSize = number == 1 ? half : bytes.Length - half,
            });
            parts.Add(new PartETag(number, part.ETag));
        }
        await client.CompleteMultipartUploadAsync(new CompleteMultipartUploadRequest { BucketName = rig.Bucket, Key = key, UploadId = start.UploadId, PartETags = parts });
    }

    private sealed class ReplacingStore(IObjectStore inner) : ForwardingStore(inner)
    {
        private int _gets;

        public Func<Task>? AfterFirstGet { get; set; }

        public override async Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
        {
            var answered = await base.GetAsync(key, destination, offset, length, expected, cancellationToken);
            if (AfterFirstGet is { } replace && Interlocked.Increment(ref _gets) == 1)
            {
                await replace();
            }
            return answered;
        }
    }
}
