using GeoDrive.Storage.S3;
using GeoDrive.TestSupport;

namespace GeoDrive.Storage.S3.Tests;

/// <summary>Endpoints failing and answering badly, injected by a fault proxy in front of the real test server.</summary>
public sealed class FaultTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IDisposable
{
    private const int MiB = 1024 * 1024;
    private readonly TempDirectory _temp = new("faults");
    private readonly List<FaultProxy> _proxies = [];

    private FaultProxy Proxy()
    {
        var proxy = new FaultProxy(s3.Endpoint);
        _proxies.Add(proxy);
        return proxy;
    }

    private S3ObjectStore Store(string bucket, FaultProxy first, params FaultProxy[] more) => new(new S3StoreOptions
    {
        Endpoint = new Uri(first.Endpoint),
        AdditionalEndpoints = more.Select(p => new Uri(p.Endpoint)).ToArray(),
        Bucket = bucket,
        AccessKey = s3.AccessKey,
        SecretKey = s3.SecretKey,
        MultipartThreshold = 5 * MiB,
        PartSize = 5 * MiB,
        MultipartUploadThreads = 3,
        MaxErrorRetry = 3,
        ConnectTimeout = TimeSpan.FromSeconds(2),
    });

    private async Task<string> FileWithAsync(byte[] bytes)
    {
        var path = _temp.Combine(Guid.NewGuid().ToString("N"));
        await File.WriteAllBytesAsync(path, bytes);
        return path;
    }

    private static async Task<byte[]> GetAsync(S3ObjectStore store, string key)
    {
        using var buffer = new MemoryStream();
        await store.GetAsync(key, buffer);
        return buffer.ToArray();
    }

    [Fact]
    public async Task Injected_5xx_answers_and_connection_resets_are_retried_with_no_corruption_and_no_open_multipart_upload()
    {
        var bucket = s3.CreateBucket();
        var proxy = Proxy();
        using var store = Store(bucket, proxy);
        var large = DriveRig.RandomBytes(23 * MiB + 1, 1);
        var small = DriveRig.RandomBytes(300_000, 2);
        var meta = new Dictionary<string, string>();

        // 503 SlowDown and 500 InternalError, the two 5xx answers S3 servers give under load.
        proxy.InjectSlowDowns(3);
        proxy.InjectInternalErrors(2);
        proxy.InjectResets(2);
        await using (var source = File.OpenRead(await FileWithAsync(large)))
        {
            await store.PutAsync("big.bin", source, large.Length, meta);
        }
        proxy.InjectResets(1);
        proxy.InjectSlowDowns(1);
        await store.PutAsync("small.bin", new MemoryStream(small), small.Length, meta);
        proxy.InjectSlowDowns(1);
        proxy.InjectInternalErrors(1);
        var bigBack = await GetAsync(store, "big.bin");

        Assert.Equal(large, bigBack);
        Assert.Equal(small, await GetAsync(store, "small.bin"));
        Assert.True(proxy.SlowDownsSent + proxy.ResetsSent >= 7 && proxy.InternalErrorsSent >= 2,
            $"faults delivered: {proxy.SlowDownsSent} SlowDown, {proxy.InternalErrorsSent} InternalError, {proxy.ResetsSent} resets");
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
    }

    [Fact]
    public async Task With_two_endpoints_stopping_one_mid_run_still_completes_every_transfer()
    {
        var bucket = s3.CreateBucket();
        var first = Proxy();
        var second = Proxy();
        using var store = Store(bucket, first, second);
        var contents = Enumerable.Range(0, 30).Select(i => DriveRig.RandomBytes(50_000 + i, 100 + i)).ToList();
        var meta = new Dictionary<string, string>();

        for (var i = 0; i < contents.Count; i++)
        {
            if (i == 10)
            {
                second.Stop();
            }
            await store.PutAsync($"f{i:00}.bin", new MemoryStream(contents[i]), contents[i].Length, meta);
        }
        var large = DriveRig.RandomBytes(12 * MiB, 3);
        await using (var source = File.OpenRead(await FileWithAsync(large)))
        {
            await store.PutAsync("large.bin", source, large.Length, meta);
        }

        for (var i = 0; i < contents.Count; i++)
        {
            Assert.Equal(contents[i], await GetAsync(store, $"f{i:00}.bin"));
        }
        Assert.Equal(large, await GetAsync(store, "large.bin"));
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
    }

    [Fact]
    public async Task Endpoint_health_shows_a_stopped_endpoint_out_with_its_failures_while_the_other_serves()
    {
        var bucket = s3.CreateBucket();
        var first = Proxy();
        var second = Proxy();
        using var store = Store(bucket, first, second);
        var address = (FaultProxy p) => new Uri(p.Endpoint).GetLeftPart(UriPartial.Authority);
        Assert.Equal([new(address(first), true, 0), new(address(second), true, 0)], store.EndpointHealth());

        first.Stop();
        Assert.Null(await store.HeadAsync("x"));

        Assert.Equal([new(address(first), false, 1), new(address(second), true, 0)], store.EndpointHealth());
    }

    [Fact]
    public async Task A_stopped_endpoint_is_probed_back_in_once_it_answers_again()
    {
        var bucket = s3.CreateBucket();
        var only = Proxy();
        using var store = Store(bucket, only);
        only.Stop();
        var refused = await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => store.HeadAsync("x"));
        Assert.Equal(GeoDrive.Core.Errors.ErrorIds.EndpointUnreachable, refused.ErrorId);

        only.Start();

        Assert.Null(await store.HeadAsync("x"));
    }

    [Fact]
    public async Task A_frozen_endpoint_fails_a_request_within_the_idle_timeout_the_next_ones_at_once_and_is_asked_again_after_that()
    {
        var bucket = s3.CreateBucket();
        var proxy = Proxy();
        var time = new MovableTime();
        using var store = new S3ObjectStore(new S3StoreOptions
        {
            Time = time,
            Endpoint = new Uri(proxy.Endpoint),
            Bucket = bucket,
            AccessKey = s3.AccessKey,
            SecretKey = s3.SecretKey,
            IdleTimeout = TimeSpan.FromSeconds(5),
        });
        var body = DriveRig.RandomBytes(3 * MiB, 4);
        await store.PutAsync("before", new MemoryStream(body), body.Length, new Dictionary<string, string>());

        proxy.Freeze();
        var first = System.Diagnostics.Stopwatch.StartNew();
        var silent = await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => GetAsync(store, "before"));
        first.Stop();
        var next = System.Diagnostics.Stopwatch.StartNew();
        var again = await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => store.HeadAsync("before"));
        next.Stop();

        Assert.Equal((GeoDrive.Core.Errors.ErrorIds.EndpointUnreachable, GeoDrive.Core.Errors.ErrorIds.EndpointUnreachable), (silent.ErrorId, again.ErrorId));
        Assert.Contains("did not answer", silent.Message, StringComparison.Ordinal);
        // One idle timeout (and the SDK's short retry backoff), not one per SDK attempt (three: 15 s);
        // the next request is not sent to a known-silent endpoint.
        Assert.InRange(first.Elapsed, TimeSpan.FromSeconds(4.5), TimeSpan.FromSeconds(11));
        Assert.True(next.Elapsed < TimeSpan.FromSeconds(1), $"the next request took {next.Elapsed.TotalSeconds:F1} s");

        proxy.Thaw();
        // Once EndpointOutTime has passed, the endpoint is asked again.
        time.Advance(TimeSpan.FromSeconds(6)); // one idle timeout
        Assert.Equal(body, await GetAsync(store, "before"));
    }

    /// <summary>The system's time, moved on by the test (the store's endpoint health reads it; timeouts stay real).</summary>
    private sealed class MovableTime : TimeProvider
    {
        private long _offsetTicks;

        public void Advance(TimeSpan by) => Interlocked.Add(ref _offsetTicks, by.Ticks);

        public override DateTimeOffset GetUtcNow() => base.GetUtcNow() + TimeSpan.FromTicks(Interlocked.Read(ref _offsetTicks));
    }

    public void Dispose()
    {
        foreach (var proxy in _proxies)
        {
            proxy.Dispose();
        }
        _temp.Dispose();
    }
}
