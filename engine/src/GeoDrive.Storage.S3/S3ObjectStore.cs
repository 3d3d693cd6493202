using System.Buffers;
using System.Net;
using System.Runtime.CompilerServices;
using Amazon.Runtime;
using GeoDrive.Core.Errors;
using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Storage.S3;

/// <summary>
/// A bucket on any S3-compatible server. Streams uploads (multipart above the threshold, aborted on
/// failure so nothing is orphaned); translates every SDK failure with <see cref="S3Errors"/>.
/// </summary>
public sealed partial class S3ObjectStore : IObjectStore, IEndpointHealth, IDisposable
{
    private readonly S3EndpointPool _endpoints;
    private readonly S3StoreOptions _options;

    /// <summary>True once the server answered a conditional write with NotImplemented: later uploads go without conditions.</summary>
    public bool ConditionalWritesRefused { get; private set; }

    /// <summary>True once the server refused a PUT's If-Match that held (the object was that version): later uploads go without it.</summary>
    public bool IfMatchRefused { get; private set; }

    public S3ObjectStore(S3StoreOptions options)
    {
        options.Validate();
        _options = options;
        _multipart = new MultipartTransfer(options.MultipartThreshold, options.PartSize, options.MultipartUploadThreads);
        _endpoints = new S3EndpointPool(options);
        _direct = new DirectRequests(options);
    }

    // The single PUT and the ranged GET signed and sent here, the SDK answering what they do not (docs/decisions/0030-own-requests-for-the-hot-path.md).
    private readonly DirectRequests _direct;

    /// <summary>How many requests the store's own signed path answered, not the SDK (tests).</summary>
    internal long DirectAnswers => _direct.Answered;

    public string Bucket => _options.Bucket;

    // transfer.multipart of the policy in force: the options' at first, replaced by each policy reload (UseMultipart).
    private volatile MultipartTransfer _multipart;

    /// <summary>How large files go from now on (hot reload); uploads already under way keep the settings they started with.</summary>
    public void UseMultipart(MultipartTransfer settings)
    {
        settings.Validate();
        _multipart = settings;
    }

    public async Task CheckAccessAsync(CancellationToken cancellationToken = default)
    {
        // A listing, not HEAD bucket: its error body tells "no such bucket" from "bad key" from "denied".
        // Every endpoint is checked, so a mistyped second URL is found at creation, not at the first failover.
        foreach (var endpoint in _endpoints.All)
        {
            await S3Errors.GuardAsync(_options, endpoint.Url, null, () => endpoint.Client.ListObjectsV2Async(new ListObjectsV2Request { BucketName = _options.Bucket, MaxKeys = 1, Encoding = EncodingType.Url }, cancellationToken));
        }
    }

    public Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default) =>
        OnAnyEndpointAsync(key, async client =>
        {
            try
            {
                var response = await client.GetObjectMetadataAsync(new GetObjectMetadataRequest { BucketName = _options.Bucket, Key = key }, cancellationToken);
                return new ObjectInfo(key, response.ContentLength, response.ETag, Utc(response.LastModified), ReadMetadata(response.Metadata), NullIfEmpty(response.VersionId));
            }
            catch (AmazonS3Exception ex) when (ex.StatusCode == HttpStatusCode.NotFound && ex.ErrorCode != "NoSuchBucket")
            {
                return null;
            }
        }, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer: null, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer, PutCondition.Any, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer, condition, contentSha256: null, cancellationToken);

    public async Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default)
    {
        var sent = ConditionalWritesRefused || (IfMatchRefused && !condition.KeyFree) ? PutCondition.Any : condition;
        try
        {
            return await PutOnceAsync(key, content, length, metadata, observer, sent, contentSha256, cancellationToken);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch && !condition.IsAny)
        {
            if (sent.ETag is not null && length <= _multipart.Threshold && content.CanSeek && Satisfies(sent, await HeadAsync(key, cancellationToken)))
            {
                // Refused though the object is the very version the condition names: Ceph RGW (16) refuses every If-Match
                // on a PUT into a bucket that keeps versions. Uploads replacing a version go on without it, the engine's
                // comparison (a HEAD) just before still deciding (docs/decisions/0014-conditional-uploads.md).
                IfMatchRefused = true;
                content.Position = 0;
                return await PutOnceAsync(key, content, length, metadata, observer, PutCondition.Any, contentSha256, cancellationToken);
            }
            throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                $"The object '{key}' in bucket '{_options.Bucket}' changed (another site or tool wrote it) after this upload compared with it: nothing was overwritten.",
                "Nothing to do: GeoDrive compares again and, when both changed, keeps both versions.", ex);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectNotFound && sent.ETag is not null)
        {
            // AWS S3 answers a PUT under If-Match on a key that holds nothing with 404 (NoSuchKey): the version named is gone.
            throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                $"The object '{key}' in bucket '{_options.Bucket}' was deleted (by another site or tool) before this upload could replace it: nothing was written.",
                "Nothing to do: GeoDrive compares again and uploads the file as new.", ex);
        }
        catch (GeoDriveException ex) when (!condition.IsAny && !ConditionalWritesRefused && ex.InnerException is AmazonS3Exception { ErrorCode: "NotImplemented" } && content.CanSeek)
        {
            // A server without conditional writes (501): uploads go on unconditioned, the conflict check's HEAD
            // still comparing first (docs/decisions/0014-conditional-uploads.md).
            ConditionalWritesRefused = true;
            content.Position = 0;
            return await PutOnceAsync(key, content, length, metadata, observer, PutCondition.Any, contentSha256, cancellationToken);
        }
    }

    private async Task<ObjectInfo> PutOnceAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken)
    {
        if (length > _multipart.Threshold)
        {
            await PutMultipartAsync(key, content, length, metadata, observer, condition, cancellationToken);
            // Verified by HEAD: the completion's own answer is not what later readers see (Ceph Pacific: empty ETag).
            return await HeadAsync(key, cancellationToken)
                ?? throw S3Errors.Translate(new InvalidOperationException("the object is missing right after its upload"), _options, _options.Endpoint, key);
        }

        // Bytes already in memory (the engine reads a small file once) are sent from where they are.
        var inMemory = content is MemoryStream memory && memory.Position == 0 && memory.Length == length && memory.TryGetBuffer(out var segment) && segment.Offset == 0
            ? segment.Array
            : null;
        var buffer = inMemory ?? ArrayPool<byte>.Shared.Rent((int)Math.Max(length, 1));
        try
        {
            // Read exactly `length` bytes into memory (≤ threshold) so the SDK can sign the payload
            // over a seekable stream even when the source is not seekable, and a failover can resend it.
            var read = inMemory is not null ? length : await ReadFullyAsync(content, buffer.AsMemory(0, (int)length), cancellationToken);
            if (read != length)
            {
                throw new IOException($"'{key}': the source gave {read} bytes where {length} were expected (the file changed while uploading).");
            }
            var response = await OnAnyEndpointAsync(key, async endpoint =>
            {
                if (await _direct.TryPutAsync(endpoint.Http, endpoint.Url, key, new ArraySegment<byte>(buffer, 0, (int)length), metadata, condition, contentSha256, cancellationToken) is { } put)
                {
                    return put;
                }
                endpoint.Silence.ThrowIfSilent();
                var body = new MemoryStream(buffer, 0, (int)length, writable: false);
                // Signed with the caller's SHA-256 of these bytes when it has one (the SDK would hash them again); the server
                // refuses a body that does not match it (see VerifiesPayloadChecksumsAsync).
                var request = new PutObjectRequest { BucketName = _options.Bucket, Key = key, InputStream = body, AutoCloseStream = true, UseChunkEncoding = false };
                if (contentSha256 is not null)
                {
                    KnownPayloadClient.SignWith(request, contentSha256);
                }
                Condition(condition, etag => request.IfMatch = etag, () => request.IfNoneMatch = "*");
                if (ObjectHeaders.Apply(metadata, request.Metadata) is { } tags)
                {
                    request.TagSet = tags;
                }
                var answer = await endpoint.Client.PutObjectAsync(request, cancellationToken);
                return (answer.ETag, VersionId: NullIfEmpty(answer.VersionId));
            }, cancellationToken);
            if (!condition.IsAny && !_probedWithVersions && _conditionalPuts is not null && !string.IsNullOrEmpty(response.VersionId))
            {
                // Versioning was turned on after the probe: asked again before the next upload relies on a refusal.
                _conditionalPuts = null;
            }
            // A single PUT answers with the object's ETag, the MD5 of its bytes: the caller checks it
            // against its own MD5, so no HEAD is needed (rclone pays one per file).
            return new ObjectInfo(key, length, response.ETag, _options.Time.GetUtcNow(), metadata, response.VersionId);
        }
        finally
        {
            if (inMemory is null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>Sets a request's If-Match (the version compared with) or If-None-Match: * (the key must be free).</summary>
    internal static void Condition(PutCondition condition, Action<string> ifMatch, Action ifNoneMatch)
    {
        if (condition.KeyFree)
        {
            ifNoneMatch();
        }
        else if (condition.ETag is { } etag)
        {
            // Unquoted: Ceph RGW compares a PUT's If-Match with its stored ETag as is (a quoted one never matches);
            // AWS S3 and moto take either.
            ifMatch(etag.Trim('"'));
        }
    }

    /// <summary>Whether the object now under the key is one a PUT under <paramref name="condition"/> may replace.</summary>
    internal static bool Satisfies(PutCondition condition, ObjectInfo? current) =>
        condition.KeyFree ? current is null
        : condition.ETag is not { } etag || (current is not null && string.Equals(current.ETag?.Trim('"'), etag.Trim('"'), StringComparison.OrdinalIgnoreCase));

    public Task GetAsync(string key, Stream destination, long offset = 0, long? length = null, CancellationToken cancellationToken = default) =>
        GetAsync(key, destination, offset, length, default(ObjectVersion), cancellationToken);

    public async Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
    {
        if (length is 0)
        {
            return null;
        }
        // The SDK is always asked for a range, even for the whole object: without one it checks the answer's MD5
        // against the ETag in managed code (~25 ms of CPU per MB here, most of a recall's cost), while every caller
        // verifies the bytes itself (the recall by its hash). An empty object refuses "bytes=0-" (416).
        var range = length is { } l ? $"bytes={offset}-{offset + l - 1}" : $"bytes={offset}-";
        // The store's own GET asks for a whole object without one: Ceph RGW spent about a quarter more CPU on a ranged
        // GET of a 10 KB object (docs/decisions.md), and a small file's recall asks for the whole object.
        var whole = offset == 0 && length is null;
        // Pinned: each range of a recall comes from the one version it started with, or fails (412), so a
        // replaced object restarts the recall from its new version. The version id only when no ETag is known:
        // with it, a versioned bucket would go on serving the old version and the change would go unseen.
        // Made only when the SDK is asked (the store's own GET answers nearly every range, pinned the same way).
        GetObjectRequest SdkRequest() => new()
        {
            BucketName = _options.Bucket,
            Key = key,
            ByteRange = new ByteRange(range),
            EtagToMatch = string.IsNullOrEmpty(expected.ETag) ? null : expected.ETag,
            VersionId = string.IsNullOrEmpty(expected.ETag) && !string.IsNullOrEmpty(expected.VersionId) ? expected.VersionId : null,
        };
        // Failover only until the answer starts: once bytes reached the destination, a retry would repeat them.
        using var response = await OnAnyEndpointAsync(key, async endpoint =>
        {
            if (await _direct.TryGetAsync(endpoint.Http, endpoint.Url, key, whole ? null : range, expected, cancellationToken) is { } direct)
            {
                return new Answer(direct, await direct.Content.ReadAsStreamAsync(cancellationToken), AnsweredBy(key, direct));
            }
            endpoint.Silence.ThrowIfSilent();
            try
            {
                var sdk = await endpoint.Client.GetObjectAsync(SdkRequest(), cancellationToken);
                return new Answer(sdk, sdk.ResponseStream, new ObjectInfo(key, WholeSize(sdk), sdk.ETag, Utc(sdk.LastModified), ReadMetadata(sdk.Metadata), NullIfEmpty(sdk.VersionId)));
            }
            catch (AmazonS3Exception ex) when (ex.StatusCode == System.Net.HttpStatusCode.RequestedRangeNotSatisfiable && offset == 0 && length is null)
            {
                return null; // the object is empty
            }
        }, cancellationToken);
        if (response is null)
        {
            return null;
        }
        var answered = response.Object;
        var buffer = ArrayPool<byte>.Shared.Rent(1 << 20);
        long total = 0;
        try
        {
            while (true)
            {
                int read;
                try
                {
                    read = await response.Body.ReadAsync(buffer, cancellationToken);
                }
                catch (Exception ex) when (ex is IOException or HttpRequestException or AmazonServiceException)
                {
                    throw S3Errors.Translate(ex, _options, _options.Endpoint, key);
                }
                if (read == 0)
                {
                    // A whole object's answer without a range: empty reads as the SDK's refused range did, and its size is
                    // the bytes that came (a server that streams it chunked names no length).
                    return !whole ? answered : total == 0 ? null : answered.Size == total ? answered : answered with { Size = total };
                }
                total += read;
                // The caller's failure (a full disk) is its own, never taken for the server's.
                await destination.WriteAsync(buffer.AsMemory(0, read), cancellationToken);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    public async IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        // EncodingType=url: a key holding a character XML 1.0 cannot carry (U+0001, U+FFFE …) would make the whole
        // listing unreadable otherwise. The keys and prefixes come back encoded (the SDK leaves them so): decoded here.
        var request = new ListObjectsV2Request { BucketName = _options.Bucket, Prefix = prefix, Delimiter = recursive ? null : "/", Encoding = EncodingType.Url };
        while (true)
        {
            var response = await OnAnyEndpointAsync(prefix, client => client.ListObjectsV2Async(request, cancellationToken), cancellationToken);
            foreach (var folder in response.CommonPrefixes ?? [])
            {
                yield return new ObjectInfo(UrlDecoded(folder), 0, null, DateTimeOffset.MinValue, EmptyMetadata);
            }
            foreach (var o in response.S3Objects ?? [])
            {
                yield return new ObjectInfo(UrlDecoded(o.Key), o.Size ?? 0, o.ETag, Utc(o.LastModified), EmptyMetadata);
            }
            if (response.IsTruncated != true || string.IsNullOrEmpty(response.NextContinuationToken))
            {
                yield break;
            }
            request.ContinuationToken = response.NextContinuationToken;
        }
    }

    /// <summary>A GET's answer, from the SDK or the store's own request: what owns it, its body, and the object it describes.</summary>
    private sealed record Answer(IDisposable Owner, Stream Body, ObjectInfo Object) : IDisposable
    {
        public void Dispose() => Owner.Dispose();
    }

    /// <summary>The object an answer of the store's own GET describes (a ranged one names the whole size in its Content-Range).</summary>
    private static ObjectInfo AnsweredBy(string key, HttpResponseMessage response) => new(
        key,
        WholeSize(DirectRequests.Header(response, "Content-Range"), response.Content.Headers.ContentLength ?? 0),
        DirectRequests.Header(response, "ETag"),
        response.Content.Headers.LastModified ?? DateTimeOffset.MinValue,
        DirectRequests.Metadata(response),
        NullIfEmpty(DirectRequests.Header(response, "x-amz-version-id")));

    /// <summary>The object's whole size from a ranged answer ("bytes 0-9/10"), else the answer's own length.</summary>
    internal static long WholeSize(GetObjectResponse response) => WholeSize(response.ContentRange, response.ContentLength);

    private static long WholeSize(string? contentRange, long answerLength) =>
        contentRange is { } range && range.LastIndexOf('/') is var slash and >= 0
            && long.TryParse(range.AsSpan(slash + 1), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var size)
            ? size
            : answerLength;

    /// <summary>A key from a listing asked with EncodingType=url: AWS writes a space as '+' (a '+' as %2B), Ceph as %20.</summary>
    internal static string UrlDecoded(string key) => Uri.UnescapeDataString(key.Replace('+', ' '));

    public Task DeleteAsync(string key, CancellationToken cancellationToken = default) =>
        OnAnyEndpointAsync(key, client => client.DeleteObjectAsync(new DeleteObjectRequest { BucketName = _options.Bucket, Key = key }, cancellationToken), cancellationToken);

    /// <summary>
    /// Set once a server answered a conditional DELETE with 501, or refused it with the version named there: deletes go on
    /// without the condition (the engine's look just before still deciding; docs/decisions/0044-copies-and-deletes-name-what-they-may-replace.md).
    /// </summary>
    public bool ConditionalDeletesRefused { get; private set; }

    public async Task DeleteAsync(string key, string etag, CancellationToken cancellationToken = default)
    {
        if (ConditionalDeletesRefused)
        {
            await DeleteAsync(key, cancellationToken);
            return;
        }
        try
        {
            // Unquoted, as a PUT's If-Match (Condition).
            await OnAnyEndpointAsync(key, client => client.DeleteObjectAsync(
                new DeleteObjectRequest { BucketName = _options.Bucket, Key = key, IfMatch = etag.Trim('"') }, cancellationToken), cancellationToken);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch)
        {
            if (Satisfies(PutCondition.Matching(etag), await HeadAsync(key, cancellationToken)))
            {
                // Refused though the object is the very version named (as Ceph 16 does with a PUT's If-Match in a bucket that
                // keeps versions): such a server gets deletes without it, or the delete would be refused for good.
                ConditionalDeletesRefused = true;
                await DeleteAsync(key, cancellationToken);
                return;
            }
            throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                $"The object '{key}' in bucket '{_options.Bucket}' was written (by another site or tool) after this drive looked at it: it was not deleted.",
                "Nothing to do: GeoDrive looks again and keeps a change made elsewhere.", ex);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectNotFound)
        {
            // Deleted meanwhile (AWS S3 answers If-Match on a free key with 404): nothing left to delete.
        }
        catch (GeoDriveException ex) when (ex.InnerException is AmazonS3Exception { ErrorCode: "NotImplemented" })
        {
            ConditionalDeletesRefused = true;
            await DeleteAsync(key, cancellationToken);
        }
    }

    /// <summary>What the write probe found the server refuses: a PUT for a free key over a taken one, a PUT over a version it did not name.</summary>
    private sealed record ConditionalPuts(bool RefusesTakenKeys, bool RefusesOtherVersions);

    // The probe's answer once the server gave one (null until then: a probe the endpoint could not answer is asked again).
    private volatile ConditionalPuts? _conditionalPuts;
    // Whether the bucket kept versions when the probe ran: Ceph RGW ignores If-None-Match in a bucket that keeps versions.
    private volatile bool _probedWithVersions;
    private readonly SemaphoreSlim _probing = new(1, 1);

    public async Task<bool> RefusesPutsOverTakenKeysAsync(string probeKey, CancellationToken cancellationToken = default) =>
        (await ProbeConditionalPutsAsync(probeKey, cancellationToken))?.RefusesTakenKeys == true && !ConditionalWritesRefused;

    // The probe asks about other versions only where the server refused a PUT over a taken key: RefusesOtherVersions implies both.
    public async Task<bool?> RefusesConditionalWritesAsync(string probeKey, CancellationToken cancellationToken = default) =>
        await ProbeConditionalPutsAsync(probeKey, cancellationToken) is { } found ? found.RefusesOtherVersions && !ConditionalWritesRefused && !IfMatchRefused : null;

    public async Task<bool> RefusesPutsOverOtherVersionsAsync(string probeKey, CancellationToken cancellationToken = default) =>
        await RefusesConditionalWritesAsync(probeKey, cancellationToken) == true;

    private async Task<ConditionalPuts?> ProbeConditionalPutsAsync(string probeKey, CancellationToken cancellationToken)
    {
        if (_conditionalPuts is { } known)
        {
            return known;
        }
        await _probing.WaitAsync(cancellationToken);
        try
        {
            return _conditionalPuts ??= await ProbeWritesAsync(probeKey, cancellationToken);
        }
        catch (GeoDriveException)
        {
            // Not answered (unreachable, denied): not relied on, and asked again next time.
            return null;
        }
        finally
        {
            _probing.Release();
        }
    }

    /// <summary>
    /// Writes the probe's key, then again under If-None-Match: * (must be refused), then again under If-Match on an ETag it
    /// does not hold (must be refused), then under If-Match on the one it holds (must be taken: Ceph RGW refuses every
    /// If-Match in a bucket that keeps versions). Only a server that refuses the first condition is asked the others.
    /// </summary>
    private async Task<ConditionalPuts> ProbeWritesAsync(string probeKey, CancellationToken cancellationToken)
    {
        var none = new Dictionary<string, string>();
        var written = new List<string?>();
        Task<ObjectInfo> Write(PutCondition condition) =>
            PutOnceAsync(probeKey, new MemoryStream([], writable: false), 0, none, null, condition, null, cancellationToken);
        try
        {
            var first = await Write(PutCondition.Any);
            written.Add(first.VersionId);
            _probedWithVersions = first.VersionId is not null;
            if (!await RefusedAsync(() => Write(PutCondition.Absent), written))
            {
                return new ConditionalPuts(false, false);
            }
            // An ETag no object has (the MD5 of one byte this probe never writes): the key holds the empty object's.
            if (string.IsNullOrEmpty(first.ETag) || !await RefusedAsync(() => Write(PutCondition.Matching("93b885adfe0da089cdf634904fd59f71")), written))
            {
                return new ConditionalPuts(true, false);
            }
            return new ConditionalPuts(true, !await RefusedAsync(() => Write(PutCondition.Matching(first.ETag)), written));
        }
        finally
        {
            await RemoveProbeAsync(probeKey, written);
        }
    }

    /// <summary>Whether the server refused the probe's conditional write (412); written over the key, or refusing conditions altogether (501): no.</summary>
    private static async Task<bool> RefusedAsync(Func<Task<ObjectInfo>> write, List<string?> written)
    {
        try
        {
            written.Add((await write()).VersionId);
            return false;
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch)
        {
            return true;
        }
        catch (GeoDriveException ex) when (ex.InnerException is AmazonS3Exception { ErrorCode: "NotImplemented" })
        {
            return false;
        }
    }

    /// <summary>
    /// Takes away what a probe wrote. In a bucket that keeps versions a plain DELETE would leave every probe's versions
    /// behind a delete marker, a few more at each start of the service, forever: there each version the probe made is
    /// deleted by its id. Where that is refused (no s3:DeleteObjectVersion), the plain DELETE still hides the key.
    /// </summary>
    private async Task RemoveProbeAsync(string probeKey, IReadOnlyList<string?> written)
    {
        if (written.Count == 0 || written.Any(v => v is null))
        {
            await DeleteAsync(probeKey, CancellationToken.None);
            return;
        }
        try
        {
            foreach (var versionId in written)
            {
                await OnAnyEndpointAsync(probeKey, client => client.DeleteObjectAsync(
                    new DeleteObjectRequest { BucketName = _options.Bucket, Key = probeKey, VersionId = versionId }, CancellationToken.None), CancellationToken.None);
            }
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.AccessDenied)
        {
            await DeleteAsync(probeKey, CancellationToken.None);
        }
    }

    private bool? _verifiesPayloadChecksums;

    public async Task<bool> VerifiesPayloadChecksumsAsync(string probeKey, CancellationToken cancellationToken = default)
    {
        if (_verifiesPayloadChecksums is { } known)
        {
            return known;
        }
        await _probing.WaitAsync(cancellationToken);
        try
        {
            _verifiesPayloadChecksums ??= await ProbePayloadChecksumsAsync(probeKey, cancellationToken);
            return _verifiesPayloadChecksums.Value;
        }
        catch (GeoDriveException)
        {
            // Not answered (unreachable, denied): not relied on, and asked again next time.
            return false;
        }
        finally
        {
            _probing.Release();
        }
    }

    // The SHA-256 of no bytes: the probe's one byte is signed with it.
    private const string EmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    private async Task<bool> ProbePayloadChecksumsAsync(string probeKey, CancellationToken cancellationToken)
    {
        ObjectInfo written;
        try
        {
            written = await PutOnceAsync(probeKey, new MemoryStream([0x2a], writable: false), 1, new Dictionary<string, string>(), null, PutCondition.Any, EmptySha256, cancellationToken);
        }
        catch (GeoDriveException ex) when (IsPayloadRefused(ex))
        {
            // Refused, and nothing written.
            return true;
        }
        // Written under a hash it does not have: the server takes whatever arrives.
        await RemoveProbeAsync(probeKey, [written.VersionId]);
        return false;
    }

    private static bool IsPayloadRefused(GeoDriveException ex) =>
        ex.InnerException is AmazonS3Exception { ErrorCode: "XAmzContentSHA256Mismatch" or "BadDigest" };

    /// <summary>
    /// Runs one request on the next endpoint; when that endpoint cannot be reached it is taken out and
    /// the request goes to the next one, so one stopped gateway never fails a transfer while another
    /// answers. Answers from a server (403, 404, 5xx after the SDK's own retries) are final here.
    /// </summary>
    private Task<T> OnAnyEndpointAsync<T>(string? key, Func<AmazonS3Client, Task<T>> call, CancellationToken cancellationToken) =>
        OnAnyEndpointAsync(key, endpoint => call(endpoint.Client), cancellationToken);

    private async Task<T> OnAnyEndpointAsync<T>(string? key, Func<S3Endpoint, Task<T>> call, CancellationToken cancellationToken)
    {
        GeoDriveException? unreachable = null;
        for (var attempt = 0; attempt < _endpoints.Count; attempt++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var endpoint = _endpoints.Pick();
            if (endpoint.Silence.Silent() is { } silent)
            {
                // It held a request without answering moments ago: failing now costs nothing, asking
                // again (through the SDK and its retries) would cost another idle timeout.
                unreachable = S3Errors.Translate(silent, _options, endpoint.Url, key);
                continue;
            }
            try
            {
                var result = await S3Errors.GuardAsync(_options, endpoint.Url, key, () => call(endpoint));
                _endpoints.Succeeded(endpoint);
                return result;
            }
            catch (GeoDriveException ex) when (S3Errors.IsUnreachable(ex))
            {
                _endpoints.Failed(endpoint);
                unreachable = ex;
            }
        }
        throw unreachable!;
    }

    /// <summary>Multipart uploads still open in the bucket (an orphan costs space): for tests and admin checks.</summary>
    public async Task<IReadOnlyList<string>> ListOpenMultipartUploadsAsync(CancellationToken cancellationToken = default)
    {
        var response = await OnAnyEndpointAsync(null, client => client.ListMultipartUploadsAsync(new ListMultipartUploadsRequest { BucketName = _options.Bucket }, cancellationToken), cancellationToken);
        return (response.MultipartUploads ?? []).Select(u => u.Key).ToList();
    }

    /// <inheritdoc/>
    public IReadOnlyList<EndpointHealth> EndpointHealth() => _endpoints.Health();

    public void Dispose() => _endpoints.Dispose();

    private static readonly IReadOnlyDictionary<string, string> EmptyMetadata = new Dictionary<string, string>();

    private static Dictionary<string, string> ReadMetadata(MetadataCollection metadata)
    {
        var result = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var name in metadata.Keys)
        {
            var key = name.StartsWith("x-amz-meta-", StringComparison.OrdinalIgnoreCase) ? name["x-amz-meta-".Length..] : name;
            result[key.ToLowerInvariant()] = metadata[name];
        }
        return result;
    }

    private static DateTimeOffset Utc(DateTime? time) => time is { } t ? new DateTimeOffset(t.ToUniversalTime(), TimeSpan.Zero) : DateTimeOffset.MinValue;

    private static string? NullIfEmpty(string? s) => string.IsNullOrEmpty(s) ? null : s;

    private static async Task<int> ReadFullyAsync(Stream stream, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        var total = 0;
        while (total < buffer.Length)
        {
            var read = await stream.ReadAsync(buffer[total..], cancellationToken);
            if (read == 0)
            {
                break;
            }
            total += read;
        }
        return total;
    }
}
