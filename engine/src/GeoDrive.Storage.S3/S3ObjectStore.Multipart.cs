using System.Buffers;
using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Storage.S3;

public sealed partial class S3ObjectStore
{
    // A part that fails is sent again this many times (each try may go to another endpoint).
    private const int PartAttempts = 3;

    /// <summary>
    /// Parts go up <see cref="S3StoreOptions.MultipartUploadThreads"/> at a time. From a file, each
    /// part is read in place at its offset through the file's own handle (never by its name again), so
    /// memory does not grow with the part size; from a memory stream, in place in its buffer; either, when
    /// paced (<see cref="IPacedStream"/>), through the pace as it is sent.
    /// From any other stream, parts are read in order into one rented buffer per part in flight.
    /// A part that fails is retried with backoff and jitter; if the upload still fails or is
    /// cancelled, it is aborted, so no orphaned parts stay behind.
    /// </summary>
    private async Task PutMultipartAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, CancellationToken cancellationToken)
    {
        var uploadId = await InitiateAsync(key, metadata, observer, cancellationToken);
        var multipart = _multipart;
        var partSize = multipart.PartSize;
        var partCount = (int)((length + partSize - 1) / partSize);
        var etags = new PartETag[partCount];
        // Paced (a bandwidth limit): each part is read from its source at its offset and paced as it is sent, not read
        // whole through the limit into a buffer and then sent in one burst.
        var paced = content as IPacedStream;
        Func<long, int, Stream>? partAt = (paced?.Source ?? content) switch
        {
            FileStream { CanSeek: true } file => (offset, size) => new FileSegmentStream(file.SafeFileHandle, offset, size),
            MemoryStream memory when memory.Position == 0 && memory.TryGetBuffer(out var bytes) =>
                (offset, size) => new MemoryStream(bytes.Array!, bytes.Offset + (int)offset, size, writable: false),
            _ => null,
        };
        using var inFlight = new SemaphoreSlim(multipart.UploadThreads);
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var parts = new List<Task>(partCount);
        try
        {
            for (var number = 1; number <= partCount; number++)
            {
                await inFlight.WaitAsync(failed.Token);
                var offset = (number - 1) * partSize;
                var size = (int)Math.Min(partSize, length - offset);
                byte[]? buffer = null;
                if (partAt is null)
                {
                    buffer = ArrayPool<byte>.Shared.Rent(size);
                    var read = await ReadFullyAsync(content, buffer.AsMemory(0, size), failed.Token);
                    if (read != size)
                    {
                        ArrayPool<byte>.Shared.Return(buffer);
                        inFlight.Release();
                        throw new IOException($"'{key}': the source ended after {offset + read} of {length} bytes (the file changed while uploading).");
                    }
                }
                var partNumber = number;
                parts.Add(Task.Run(async () =>
                {
                    try
                    {
                        etags[partNumber - 1] = await UploadPartAsync(key, uploadId, partNumber, partAt, offset, size, buffer, paced, failed.Token);
                    }
                    catch
                    {
                        await failed.CancelAsync();
                        throw;
                    }
                    finally
                    {
                        if (buffer is not null)
                        {
                            ArrayPool<byte>.Shared.Return(buffer);
                        }
                        inFlight.Release();
                    }
                }, CancellationToken.None));
            }
            await Task.WhenAll(parts);
            if (!condition.IsAny && !Satisfies(condition, await HeadAsync(key, failed.Token)))
            {
                // Checked here too: AWS S3 refuses a completion over another version, but Ceph RGW (Pacific) and moto
                // ignore its conditions, so a version written after the comparison would be replaced.
                throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                    $"The object '{key}' in bucket '{_options.Bucket}' was replaced by another version while this upload's parts were sent.",
                    "Nothing to do: GeoDrive compares again.");
            }
            if (observer is not null && !observer.StillWanted())
            {
                // Completing would publish a mix of old and new bytes under the old checksum, if only for a moment.
                throw new GeoDriveException(ErrorIds.SourceChanged, ErrorKind.InvalidOperation,
                    $"'{key}': the file changed while its parts were sent; the upload was aborted and goes again with the new bytes.",
                    "Nothing to do: GeoDrive uploads the file again once it settles.");
            }
            await OnAnyEndpointWithRetriesAsync(key, client =>
            {
                var complete = new CompleteMultipartUploadRequest { BucketName = _options.Bucket, Key = key, UploadId = uploadId, PartETags = [.. etags] };
                // Servers that check conditions on a completion (AWS S3) refuse it over another version; others ignore them.
                Condition(IfMatchRefused && !condition.KeyFree ? PutCondition.Any : condition, etag => complete.IfMatch = etag, () => complete.IfNoneMatch = "*");
                return client.CompleteMultipartUploadAsync(complete, cancellationToken);
            }, cancellationToken);
            observer?.Ended(uploadId);
            await PutObjectTagsAsync(key, metadata, cancellationToken);
        }
        catch (Exception ex)
        {
            await failed.CancelAsync();
            try
            {
                await Task.WhenAll(parts);
            }
            catch (Exception)
            {
                // Each part's own failure is folded into the first one, which is what the caller sees.
            }
            await AbortQuietlyAsync(key, uploadId);
            observer?.Ended(uploadId);
            // A part cancelled because another failed reports that other failure, not a cancellation.
            var first = parts.Select(p => p.Exception?.InnerException).FirstOrDefault(e => e is not null and not OperationCanceledException);
            if (ex is OperationCanceledException && first is not null && !cancellationToken.IsCancellationRequested)
            {
                throw first is GeoDriveException ? first : S3Errors.Translate(first, _options, _options.Endpoint, key);
            }
            throw;
        }
    }

    /// <summary>
    /// Starts a multipart upload, telling <paramref name="observer"/> before the request goes out (a start
    /// whose answer is lost still opens an upload on the server) and once its id is known.
    /// </summary>
    private async Task<string> InitiateAsync(string key, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken)
    {
        var initiate = new InitiateMultipartUploadRequest { BucketName = _options.Bucket, Key = key };
        if (ObjectHeaders.Apply(metadata, initiate.Metadata) is { } tags)
        {
            initiate.TagSet = tags;
        }
        observer?.Starting();
        string uploadId;
        try
        {
            uploadId = (await OnAnyEndpointWithRetriesAsync(key, client => client.InitiateMultipartUploadAsync(initiate, cancellationToken), cancellationToken)).UploadId;
        }
        catch
        {
            observer?.Ended(null);
            throw;
        }
        try
        {
            observer?.Started(uploadId);
            return uploadId;
        }
        catch
        {
            // Not followed, so not sent: nothing may stay open that the owner does not know of.
            await AbortQuietlyAsync(key, uploadId);
            observer?.Ended(uploadId);
            throw;
        }
    }

    private async Task<PartETag> UploadPartAsync(string key, string uploadId, int number, Func<long, int, Stream>? partAt, long offset, int size, byte[]? buffer, IPacedStream? paced, CancellationToken cancellationToken)
    {
        var response = await OnAnyEndpointWithRetriesAsync(key, client =>
        {
            var request = new UploadPartRequest
            {
                BucketName = _options.Bucket,
                Key = key,
                UploadId = uploadId,
                PartNumber = number,
                PartSize = size,
                // A part read from its source is signed as it is sent (SigV4 streaming chunks, each checked by the server), so
                // it is read once; signed whole, the SDK read it to hash it, then again to send it (ADR 0032), and a paced
                // part would pay the limit twice and leave in a burst. A part already read into a buffer is signed whole.
                UseChunkEncoding = partAt is not null,
            };
            request.InputStream = partAt is null ? new MemoryStream(buffer!, 0, size, writable: false)
                : paced is not null ? paced.Pace(partAt(offset, size))
                : partAt(offset, size);
            return client.UploadPartAsync(request, cancellationToken);
        }, cancellationToken);
        return new PartETag(number, response.ETag);
    }

    /// <summary>
    /// One request of a multipart upload (its start, a part, its completion), retried with backoff and jitter:
    /// a burst of 5xx answers or lost connections longer than the SDK's own attempts would fail the whole upload.
    /// </summary>
    private async Task<T> OnAnyEndpointWithRetriesAsync<T>(string key, Func<AmazonS3Client, Task<T>> call, CancellationToken cancellationToken)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                return await OnAnyEndpointAsync(key, call, cancellationToken);
            }
            catch (GeoDriveException ex) when (attempt < PartAttempts && IsWorthRetrying(ex) && !cancellationToken.IsCancellationRequested)
            {
                await Task.Delay(Backoff(attempt), _options.Time, cancellationToken);
            }
        }
    }

    /// <summary>Server errors and lost connections are worth another try; refusals (403, 404) are not.</summary>
    private static bool IsWorthRetrying(GeoDriveException ex) =>
        ex.ErrorId is ErrorIds.EndpointUnreachable || (ex.ErrorId is ErrorIds.StoreError && ex.InnerException is not AmazonS3Exception { StatusCode: < System.Net.HttpStatusCode.InternalServerError });

    /// <summary>Exponential backoff with full jitter: 0..(200 ms · 2^attempt).</summary>
    private static TimeSpan Backoff(int attempt) =>
        TimeSpan.FromMilliseconds(Random.Shared.NextDouble() * 200 * (1 << Math.Min(attempt, 8)));

    /// <summary>Aborts quietly (the original failure is what the caller needs).</summary>
    private async Task AbortQuietlyAsync(string key, string uploadId)
    {
        try
        {
            await AbortMultipartUploadAsync(key, uploadId, CancellationToken.None);
        }
        catch (GeoDriveException)
        {
            // Left listed and abortable: the owner finds it open under the key and tries again.
        }
    }

    public Task AbortMultipartUploadAsync(string key, string uploadId, CancellationToken cancellationToken = default) =>
        OnAnyEndpointAsync(key, async client =>
        {
            try
            {
                await client.AbortMultipartUploadAsync(new AbortMultipartUploadRequest { BucketName = _options.Bucket, Key = key, UploadId = uploadId }, cancellationToken);
            }
            catch (AmazonS3Exception ex) when (ex.StatusCode == System.Net.HttpStatusCode.NotFound && ex.ErrorCode != "NoSuchBucket")
            {
                // NoSuchUpload: completed or aborted already, which is what was owed.
            }
            return true;
        }, cancellationToken);

    public async Task<IReadOnlyList<OpenMultipartUpload>> ListMultipartUploadsAsync(string key, CancellationToken cancellationToken = default)
    {
        var open = new List<OpenMultipartUpload>();
        string? keyMarker = null, uploadIdMarker = null;
        while (true)
        {
            var response = await OnAnyEndpointAsync(key, client => client.ListMultipartUploadsAsync(new ListMultipartUploadsRequest
            {
                BucketName = _options.Bucket,
                Prefix = key,
                KeyMarker = keyMarker,
                UploadIdMarker = uploadIdMarker,
                Encoding = EncodingType.Url,
            }, cancellationToken), cancellationToken);
            open.AddRange((response.MultipartUploads ?? [])
                .Where(u => UrlDecoded(u.Key) == key)
                .Select(u => new OpenMultipartUpload(key, u.UploadId)));
            if (response.IsTruncated != true)
            {
                return open;
            }
            keyMarker = response.NextKeyMarker is { } next ? UrlDecoded(next) : null;
            uploadIdMarker = response.NextUploadIdMarker;
        }
    }
}
