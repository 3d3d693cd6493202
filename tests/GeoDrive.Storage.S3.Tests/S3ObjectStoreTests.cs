using GeoDrive.Core.Model;
using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Storage.S3;
using GeoDrive.TestSupport;

namespace GeoDrive.Storage.S3.Tests;

public sealed class S3ObjectStoreTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const long MiB = 1024 * 1024;

    private S3ObjectStore Store(string? bucket = null, long threshold = 64 * MiB, long partSize = 16 * MiB, string? endpoint = null) => new(new S3StoreOptions
    {
        Endpoint = new Uri(endpoint ?? s3.Endpoint),
        Bucket = bucket ?? s3.CreateBucket(),
        AccessKey = s3.AccessKey,
        SecretKey = s3.SecretKey,
        MultipartThreshold = threshold,
        PartSize = partSize,
        ConnectTimeout = TimeSpan.FromSeconds(2),
        MaxErrorRetry = 0,
    });

    internal static byte[] Bytes(long size, int seed)
    {
        var b = new byte[size];
        new Random(seed).NextBytes(b);
        return b;
    }

    internal static async Task<byte[]> GetAsync(S3ObjectStore store, string key, long offset = 0, long? length = null)
    {
        using var buffer = new MemoryStream();
        await store.GetAsync(key, buffer, offset, length);
        return buffer.ToArray();
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(10_000_000)]
    public async Task Put_then_get_returns_the_same_bytes_and_metadata(int size)
    {
        using var store = Store();
        var content = Bytes(size, size);
        var info = await store.PutAsync("dir/file name ü.bin", new MemoryStream(content), size, new Dictionary<string, string> { ["geodrive-sha256"] = "abc" });

        Assert.Equal(size, info.Size);
        Assert.Equal(content, await GetAsync(store, "dir/file name ü.bin"));
        var head = await store.HeadAsync("dir/file name ü.bin");
        Assert.NotNull(head);
        Assert.Equal("abc", head.Metadata["geodrive-sha256"]);
        Assert.Equal(Convert.ToHexStringLower(MD5.HashData(content)), head.ETag!.Trim('"'));
    }

    [Theory]
    [InlineData(5 * MiB - 1)]
    [InlineData(5 * MiB)]
    [InlineData(5 * MiB + 1)]
    [InlineData(15 * MiB + 1)]
    public async Task Multipart_uploads_are_byte_exact_around_the_threshold(long size)
    {
        using var store = Store(threshold: 5 * MiB, partSize: 5 * MiB);
        var content = Bytes(size, (int)size);

        await store.PutAsync("big.bin", new MemoryStream(content), size, new Dictionary<string, string> { ["k"] = "v" });

        Assert.Equal(SHA256.HashData(content), SHA256.HashData(await GetAsync(store, "big.bin")));
        Assert.Equal("v", (await store.HeadAsync("big.bin"))!.Metadata["k"]);
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
    }

    /// <summary>
    /// A paced stream (a drive's bandwidth limit) over a file or a memory buffer: each part is read from the source at
    /// its offset and through the pace as it is sent, every byte paced once, and the stream itself never read (read whole
    /// through the pace and then sent, each part left in one burst: docs/decisions/0033-throttled-parts-paced-on-the-wire.md).
    /// </summary>
    [Theory]
    [InlineData("file")]
    [InlineData("memory")]
    public async Task A_paced_multipart_upload_sends_each_part_from_its_source_through_the_pace_once(string source)
    {
        using var store = Store(threshold: 5 * MiB, partSize: 5 * MiB);
        var size = 12 * MiB + 7;
        var content = Bytes(size, 33);
        var path = Path.Combine(Path.GetTempPath(), $"geodrive-paced-{Guid.NewGuid():N}.bin");
        await File.WriteAllBytesAsync(path, content);
        try
        {
            await using Stream inner = source == "file" ? new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0)
                : new MemoryStream(content, 0, content.Length, writable: false, publiclyVisible: true);
            var paced = new CountingPace(inner);

            await store.PutAsync("paced.bin", paced, size, new Dictionary<string, string>());

            Assert.Equal(content, await GetAsync(store, "paced.bin"));
            Assert.Equal(size, paced.PacedBytes);
            Assert.Equal(3, paced.Parts);
            Assert.Equal(0, paced.ReadDirectly);
        }
        finally
        {
            File.Delete(path);
        }
    }

    /// <summary>Counts what passes through its pace, and any read of itself.</summary>
    private sealed class CountingPace(Stream source) : Stream, GeoDrive.Core.Ports.IPacedStream
    {
        private long _paced;
        private int _parts;

        public long PacedBytes => Interlocked.Read(ref _paced);
        public int Parts => Volatile.Read(ref _parts);
        public long ReadDirectly { get; private set; }

        public Stream Source => source;

        public Stream Pace(Stream part)
        {
            Interlocked.Increment(ref _parts);
            return new Counted(part, n => Interlocked.Add(ref _paced, n));
        }

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => source.Length;
        public override long Position { get => 0; set => throw new NotSupportedException(); }
        public override int Read(byte[] buffer, int offset, int count)
        {
            var n = source.Read(buffer, offset, count);
            ReadDirectly += n;
            return n;
        }

        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }

    private sealed class Counted(Stream inner, Action<int> counted) : Stream
    {
        public override bool CanRead => true;
        public override bool CanSeek => inner.CanSeek;
        public override bool CanWrite => false;
        public override long Length => inner.Length;
        public override long Position { get => inner.Position; set => inner.Position = value; }
        public override int Read(byte[] buffer, int offset, int count)
        {
            var n = inner.Read(buffer, offset, count);
            counted(n);
            return n;
        }

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            var n = await inner.ReadAsync(buffer, cancellationToken);
            counted(n);
            return n;
        }

        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => inner.Seek(offset, origin);
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }
            base.Dispose(disposing);
        }
    }

    [Fact]
    public async Task A_cancelled_multipart_upload_leaves_no_open_upload_behind()
    {
        using var store = Store(threshold: 5 * MiB, partSize: 5 * MiB);
        using var cts = new CancellationTokenSource();
        var source = new CancelAfterStream(new MemoryStream(Bytes(12 * MiB, 1)), 6 * MiB, cts);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => store.PutAsync("cancelled.bin", source, 12 * MiB, new Dictionary<string, string>(), cts.Token));

        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
        Assert.Null(await store.HeadAsync("cancelled.bin"));
    }

    [Fact]
    public async Task A_ranged_get_returns_just_that_range()
    {
        using var store = Store();
        var content = Bytes(100_000, 3);
        await store.PutAsync("r.bin", new MemoryStream(content), content.Length, new Dictionary<string, string>());

        Assert.Equal(content[1000..1100], await GetAsync(store, "r.bin", 1000, 100));
        Assert.Equal(content[99_990..], await GetAsync(store, "r.bin", 99_990));
    }

    [Fact]
    public async Task A_ranged_get_answers_with_the_object_as_a_head_shows_it_whole_size_etag_and_metadata()
    {
        using var store = Store();
        var content = Bytes(100_000, 4);
        await store.PutAsync("a.bin", new MemoryStream(content), content.Length, new Dictionary<string, string> { ["geodrive-mode"] = "640" });
        var head = (await store.HeadAsync("a.bin"))!;

        var answer = await store.GetAsync("a.bin", new MemoryStream(), 1000, 100, new ObjectVersion(head.ETag, null));

        Assert.NotNull(answer);
        Assert.Equal((100_000L, head.ETag, head.VersionId), (answer.Size, answer.ETag, answer.VersionId));
        Assert.Equal("640", answer.Metadata["geodrive-mode"]);
        await store.PutAsync("empty.bin", new MemoryStream(), 0, new Dictionary<string, string>());
        Assert.Null(await store.GetAsync("empty.bin", new MemoryStream(), 0, null, default(ObjectVersion)));
    }

    [Fact]
    public async Task Head_of_a_missing_key_is_null_and_get_of_one_says_ObjectNotFound()
    {
        using var store = Store();
        Assert.Null(await store.HeadAsync("missing"));
        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => GetAsync(store, "missing"));
        Assert.Equal(ErrorIds.ObjectNotFound, ex.ErrorId);
    }

    [Fact]
    public async Task Listing_is_recursive_or_one_level_and_delete_removes()
    {
        using var store = Store();
        foreach (var key in new[] { "a/1", "a/b/2", "c" })
        {
            await store.PutAsync(key, new MemoryStream([1]), 1, new Dictionary<string, string>());
        }
        var all = new List<string>();
        await foreach (var o in store.ListAsync(""))
        {
            all.Add(o.Key);
        }
        var top = new List<string>();
        await foreach (var o in store.ListAsync("a/", recursive: false))
        {
            top.Add(o.Key);
        }
        await store.DeleteAsync("c");

        Assert.Equal(["a/1", "a/b/2", "c"], all.Order());
        Assert.Equal(["a/1", "a/b/"], top.Order());
        Assert.Null(await store.HeadAsync("c"));
    }

    [Fact]
    public async Task A_copy_above_the_single_copy_size_goes_in_ranged_parts_with_the_new_metadata_and_leaves_no_upload_open()
    {
        var bucket = s3.CreateBucket();
        using var store = new S3ObjectStore(new S3StoreOptions
        {
            Endpoint = new Uri(s3.Endpoint), Bucket = bucket, AccessKey = s3.AccessKey, SecretKey = s3.SecretKey,
            MultipartThreshold = 64 * MiB, PartSize = 5 * MiB, MaxSingleCopySize = 5 * MiB,
        });
        var bytes = Bytes(12 * MiB + 7, 21);
        var put = await store.PutAsync("old/name.bin", new MemoryStream(bytes), bytes.Length, new Dictionary<string, string> { ["geodrive-sha256"] = "aa" });

        var copy = await store.CopyAsync("old/name.bin", "new/name.bin", new ObjectVersion(put.ETag, null), new Dictionary<string, string> { ["geodrive-sha256"] = "bb" }, observer: null);

        using var read = new MemoryStream();
        await store.GetAsync("new/name.bin", read);
        Assert.Equal(bytes, read.ToArray());
        Assert.Equal("bb", copy.Metadata["geodrive-sha256"]);
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
    }

    [Theory]
    [InlineData(1000)]
    [InlineData(6 * (int)MiB)]
    public Task A_put_over_a_version_other_than_the_one_compared_with_is_refused_and_writes_nothing(int size) =>
        ConditionalPuts.RefusedOverAnotherVersionAsync(Store(threshold: 5 * MiB, partSize: 5 * MiB), size);

    [Fact]
    public Task The_probe_finds_that_the_server_refuses_a_put_for_a_free_key_over_a_taken_one_or_over_a_version_it_does_not_name_and_leaves_nothing() =>
        ConditionalPuts.ProbeFindsRefusalAsync(Store());

    [Fact]
    public async Task A_copy_of_an_object_replaced_since_its_version_was_recorded_is_refused_as_ObjectMismatch()
    {
        using var store = Store();
        var first = await store.PutAsync("a.bin", new MemoryStream(Bytes(1000, 1)), 1000, new Dictionary<string, string>());
        await store.PutAsync("a.bin", new MemoryStream(Bytes(1000, 2)), 1000, new Dictionary<string, string>());

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => store.CopyAsync("a.bin", "b.bin", new ObjectVersion(first.ETag, null), null, null));

        Assert.Equal(ErrorIds.ObjectMismatch, refused.ErrorId);
        Assert.Null(await store.HeadAsync("b.bin"));
    }

    /// <summary>moto, as AWS S3, takes a delete's If-Match: another version written since the look is not deleted (Ceph 16 ignores it).</summary>
    [Fact]
    public async Task A_delete_naming_a_version_replaced_since_is_refused_as_ObjectMismatch_and_the_newer_version_stays()
    {
        using var store = Store();
        var first = await store.PutAsync("a.bin", new MemoryStream(Bytes(1000, 1)), 1000, new Dictionary<string, string>());
        var second = await store.PutAsync("a.bin", new MemoryStream(Bytes(1000, 2)), 1000, new Dictionary<string, string>());

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => store.DeleteAsync("a.bin", first.ETag!));
        await store.DeleteAsync("a.bin", second.ETag!);

        Assert.Equal(ErrorIds.ObjectMismatch, refused.ErrorId);
        Assert.Null(await store.HeadAsync("a.bin"));
        await store.DeleteAsync("a.bin", second.ETag!);
    }

    [Fact]
    public async Task A_bucket_that_does_not_exist_is_BucketNotFound()
    {
        using var store = Store(bucket: "no-such-bucket-here");
        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => store.CheckAccessAsync());
        Assert.Equal(ErrorIds.BucketNotFound, ex.ErrorId);
        Assert.Contains("Create the bucket", ex.Remedy, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_closed_port_is_EndpointUnreachable_quickly_and_never_object_missing()
    {
        using var store = Store(bucket: "any", endpoint: "http://127.0.0.1:1");
        var started = DateTime.UtcNow;

        var check = await Assert.ThrowsAsync<GeoDriveException>(() => store.CheckAccessAsync());
        var head = await Assert.ThrowsAsync<GeoDriveException>(() => store.HeadAsync("k"));

        Assert.Equal(ErrorIds.EndpointUnreachable, check.ErrorId);
        Assert.Equal(ErrorIds.EndpointUnreachable, head.ErrorId);
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(15), $"took {DateTime.UtcNow - started}");
    }

    [Theory]
    [InlineData(1_000)]
    [InlineData(6 * (int)MiB)]
    public async Task Object_tags_given_with_the_metadata_become_the_object_s_tag_set_and_never_user_metadata(int size)
    {
        var bucket = s3.CreateBucket();
        using var store = Store(bucket, threshold: 5 * MiB, partSize: 5 * MiB);
        var metadata = new Dictionary<string, string> { ["retention"] = "7y", [ObjectTagging.MetadataKey] = "retention=7y&source=a%20b.pdf" };

        await store.PutAsync("tagged.bin", new MemoryStream(new byte[size]), size, metadata);

        var tagging = await s3.Client.GetObjectTaggingAsync(new Amazon.S3.Model.GetObjectTaggingRequest { BucketName = bucket, Key = "tagged.bin" });
        Assert.Equal(new Dictionary<string, string> { ["retention"] = "7y", ["source"] = "a b.pdf" }, tagging.Tagging.ToDictionary(t => t.Key, t => t.Value));
        var head = await store.HeadAsync("tagged.bin");
        Assert.Equal("7y", head!.Metadata["retention"]);
        Assert.False(head.Metadata.ContainsKey(ObjectTagging.MetadataKey));
    }

    [Fact]
    public async Task A_request_the_client_cannot_send_is_a_store_error_never_an_unreachable_endpoint()
    {
        // A header the HTTP client refuses to send (not ASCII) fails before anything reaches the network: the
        // endpoint is fine, and calling it unreachable would mark it down for every other request.
        using var store = Store();
        var metadata = new Dictionary<string, string> { ["geodrive-tag-owner"] = "José" };

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => store.PutAsync("tagged.bin", new MemoryStream([1, 2, 3]), 3, metadata));

        Assert.Equal(ErrorIds.StoreError, refused.ErrorId);
        Assert.DoesNotContain("cannot be reached", refused.Message, StringComparison.Ordinal);
        await store.CheckAccessAsync();
    }

    /// <summary>A source that cancels the upload once a given number of bytes were read.</summary>
    private sealed class CancelAfterStream(Stream inner, long after, CancellationTokenSource cts) : Stream
    {
        private long _read;
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => inner.Length;
        public override long Position { get => _read; set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override int Read(byte[] buffer, int offset, int count)
        {
            if (_read >= after)
            {
                cts.Cancel();
                cts.Token.ThrowIfCancellationRequested();
            }
            var n = inner.Read(buffer, offset, count);
            _read += n;
            return n;
        }
        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if (_read >= after)
            {
                cts.Cancel();
                cancellationToken.ThrowIfCancellationRequested();
            }
            var n = inner.Read(buffer.Span);
            _read += n;
            return ValueTask.FromResult(n);
        }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}

/// <summary>Against Ceph RGW, which checks signatures as real S3 does.</summary>
public sealed class SignedS3Tests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>
{
    /// <summary>Ceph RGW takes a single PUT's If-Match unquoted only, and ignores a multipart completion's conditions.</summary>
    [Theory]
    [InlineData(1000)]
    [InlineData(6 * 1024 * 1024)]
    public Task A_put_over_a_version_other_than_the_one_compared_with_is_refused_and_writes_nothing(int size) =>
        ConditionalPuts.RefusedOverAnotherVersionAsync(new S3ObjectStore(new S3StoreOptions
        {
            Endpoint = new Uri(ceph.Endpoint), Bucket = ceph.CreateBucket(), AccessKey = ceph.AccessKey, SecretKey = ceph.SecretKey,
            MultipartThreshold = 5 * 1024 * 1024, PartSize = 5 * 1024 * 1024,
        }), size);

    [Fact]
    public Task The_probe_finds_that_the_server_refuses_a_put_for_a_free_key_over_a_taken_one_or_over_a_version_it_does_not_name_and_leaves_nothing() =>
        ConditionalPuts.ProbeFindsRefusalAsync(new S3ObjectStore(new S3StoreOptions
        {
            Endpoint = new Uri(ceph.Endpoint), Bucket = ceph.CreateBucket(), AccessKey = ceph.AccessKey, SecretKey = ceph.SecretKey,
        }));

    /// <summary>
    /// Issue 13: a PUT named with its body's SHA-256 is signed with it (the SDK does not hash the body again). Ceph checks the
    /// body against it: the right hash stores the bytes, a wrong one is refused and writes nothing.
    /// </summary>
    [Fact]
    public async Task A_put_signed_with_its_bodys_sha256_is_stored_and_one_signed_with_another_is_refused_writing_nothing()
    {
        using var store = CephStore();
        var first = S3ObjectStoreTests.Bytes(100_000, 1);
        var second = S3ObjectStoreTests.Bytes(100_000, 2);
        var none = new Dictionary<string, string>();

        await store.PutAsync("signed.bin", new MemoryStream(first), first.Length, none, null, PutCondition.Any, Sha256(first));
        var refused = await Assert.ThrowsAsync<GeoDriveException>(() =>
            store.PutAsync("signed.bin", new MemoryStream(second), second.Length, none, null, PutCondition.Any, Sha256(first)));

        Assert.Equal(ErrorIds.StoreError, refused.ErrorId);
        Assert.Contains("did not match their checksum on arrival", refused.Message, StringComparison.Ordinal);
        Assert.Equal(first, await S3ObjectStoreTests.GetAsync(store, "signed.bin"));
        Assert.Equal(Convert.ToHexStringLower(MD5.HashData(first)), (await store.HeadAsync("signed.bin"))!.ETag!.Trim('"'));
    }

    [Fact]
    public async Task The_probe_finds_that_the_server_checks_signed_bodies_asks_once_and_leaves_nothing()
    {
        using var store = CephStore();

        var first = await store.VerifiesPayloadChecksumsAsync(".geodrive/write-probe");
        var again = await store.VerifiesPayloadChecksumsAsync("elsewhere/write-probe");

        Assert.True(first);
        Assert.True(again);
        Assert.Empty(await store.ListAsync("").ToListAsync());
    }

    private S3ObjectStore CephStore() => new(new S3StoreOptions
    {
        Endpoint = new Uri(ceph.Endpoint), Bucket = ceph.CreateBucket(), AccessKey = ceph.AccessKey, SecretKey = ceph.SecretKey,
    });

    private static string Sha256(byte[] bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));

    [Fact]
    public async Task A_wrong_secret_is_CredentialsRejected_and_the_secret_is_never_in_the_error()
    {
        const string secret = "definitely-wrong-secret-1234";
        using var store = new S3ObjectStore(new S3StoreOptions { Endpoint = new Uri(ceph.Endpoint), Bucket = ceph.CreateBucket(), AccessKey = ceph.AccessKey, SecretKey = secret });

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => store.CheckAccessAsync());

        Assert.Equal(ErrorIds.CredentialsRejected, ex.ErrorId);
        Assert.DoesNotContain(secret, ex.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Keys_with_characters_XML_cannot_carry_are_listed_exactly_folders_and_all()
    {
        var bucket = ceph.CreateBucket();
        using var store = new S3ObjectStore(new S3StoreOptions { Endpoint = new Uri(ceph.Endpoint), Bucket = bucket, AccessKey = ceph.AccessKey, SecretKey = ceph.SecretKey });
        string[] keys = ["odd\u0001name.txt", "100%41 sure.txt", "dir\u001F/inner.txt", "plain.txt", "not a character \uFFFE.txt", "a+b c.txt"];
        foreach (var key in keys)
        {
            await ceph.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest { BucketName = bucket, Key = key, ContentBody = key });
        }

        var everything = new List<string>();
        await foreach (var o in store.ListAsync("", recursive: true))
        {
            everything.Add(o.Key);
        }
        var top = new List<string>();
        await foreach (var o in store.ListAsync("", recursive: false))
        {
            top.Add(o.Key);
        }

        Assert.Equal(keys.Order(StringComparer.Ordinal), everything.Order(StringComparer.Ordinal));
        Assert.Equal(new[] { "a+b c.txt", "100%41 sure.txt", "dir\u001F/", "not a character \uFFFE.txt", "odd\u0001name.txt", "plain.txt" }.Order(StringComparer.Ordinal), top.Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task An_unknown_access_key_is_named_by_its_last_four_characters_only()
    {
        const string accessKey = "geodrive-test-key-K7Q2";
        using var store = new S3ObjectStore(new S3StoreOptions { Endpoint = new Uri(ceph.Endpoint), Bucket = ceph.CreateBucket(), AccessKey = accessKey, SecretKey = ceph.SecretKey });

        var ex = await Assert.ThrowsAsync<GeoDriveException>(() => store.CheckAccessAsync());

        Assert.Equal(ErrorIds.CredentialsRejected, ex.ErrorId);
        Assert.DoesNotContain(accessKey, ex.ToString(), StringComparison.Ordinal);
        Assert.Contains("****************K7Q2", ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(accessKey, new S3StoreOptions { Endpoint = new Uri(ceph.Endpoint), Bucket = "b", AccessKey = accessKey, SecretKey = "s" }.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Signed_uploads_round_trip_including_multipart()
    {
        using var store = new S3ObjectStore(new S3StoreOptions
        {
            Endpoint = new Uri(ceph.Endpoint),
            Bucket = ceph.CreateBucket(),
            AccessKey = ceph.AccessKey,
            SecretKey = ceph.SecretKey,
            MultipartThreshold = 5 * 1024 * 1024,
            PartSize = 5 * 1024 * 1024,
        });
        await store.CheckAccessAsync();
        foreach (var size in new[] { 0, 1000, 11 * 1024 * 1024 })
        {
            var content = new byte[size];
            new Random(size).NextBytes(content);
            var info = await store.PutAsync($"s{size}", new MemoryStream(content), size, new Dictionary<string, string> { ["geodrive-sha256"] = "x" });
            using var back = new MemoryStream();
            await store.GetAsync($"s{size}", back);
            Assert.Equal(content, back.ToArray());
            Assert.Equal(size, info.Size);
            Assert.False(string.IsNullOrEmpty(info.ETag));
        }
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
    }
}

/// <summary>
/// Conditional uploads on one server: a PUT (single or multipart) over another version than the one compared
/// with, or onto a key that is no longer free, is refused (ObjectMismatch) and changes nothing.
/// </summary>
internal static class ConditionalPuts
{
    public static async Task RefusedOverAnotherVersionAsync(S3ObjectStore owned, int size)
    {
        using var store = owned;
        var compared = await store.PutAsync("c.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 1)), size, new Dictionary<string, string>());
        var theirs = await store.PutAsync("c.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 2)), size, new Dictionary<string, string>());

        var overOld = await Assert.ThrowsAsync<GeoDriveException>(() => store.PutAsync("c.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 3)), size,
            new Dictionary<string, string>(), null, PutCondition.Replacing(compared)));
        var overNothing = await Assert.ThrowsAsync<GeoDriveException>(() => store.PutAsync("c.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 4)), size,
            new Dictionary<string, string>(), null, PutCondition.Absent));

        // A version named on a key that holds none (another site deleted it): refused too, and nothing written.
        var overDeleted = await Assert.ThrowsAsync<GeoDriveException>(() => store.PutAsync("deleted.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 7)), size,
            new Dictionary<string, string>(), null, PutCondition.Matching(compared.ETag!)));

        Assert.Equal(ErrorIds.ObjectMismatch, overOld.ErrorId);
        Assert.Equal(ErrorIds.ObjectMismatch, overNothing.ErrorId);
        Assert.Equal(ErrorIds.ObjectMismatch, overDeleted.ErrorId);
        Assert.Null(await store.HeadAsync("deleted.bin"));
        Assert.Equal(S3ObjectStoreTests.Bytes(size, 2), await S3ObjectStoreTests.GetAsync(store, "c.bin"));
        Assert.Empty(await store.ListOpenMultipartUploadsAsync());
        // Over the version it did compare with, or on a free key, it goes.
        await store.PutAsync("c.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 5)), size, new Dictionary<string, string>(), null, PutCondition.Replacing(await store.HeadAsync("c.bin")));
        await store.PutAsync("free.bin", new MemoryStream(S3ObjectStoreTests.Bytes(size, 6)), size, new Dictionary<string, string>(), null, PutCondition.Absent);
        Assert.Equal(S3ObjectStoreTests.Bytes(size, 5), await S3ObjectStoreTests.GetAsync(store, "c.bin"));
        Assert.Equal(S3ObjectStoreTests.Bytes(size, 6), await S3ObjectStoreTests.GetAsync(store, "free.bin"));
        Assert.NotEqual(theirs.ETag, (await store.HeadAsync("c.bin"))!.ETag);
    }

    /// <summary>
    /// The probe answers true on a server that refuses a PUT for a free key over a taken one, and one over a version it does
    /// not name; it asks once, and takes its key away.
    /// </summary>
    public static async Task ProbeFindsRefusalAsync(S3ObjectStore owned)
    {
        using var store = owned;

        var first = await store.RefusesPutsOverTakenKeysAsync(".geodrive/write-probe");
        var again = await store.RefusesPutsOverTakenKeysAsync("elsewhere/write-probe");
        var otherVersions = await store.RefusesPutsOverOtherVersionsAsync("elsewhere/write-probe");

        Assert.True(first);
        Assert.True(again);
        Assert.True(otherVersions);
        Assert.Empty(await store.ListAsync("").ToListAsync());
    }
}
