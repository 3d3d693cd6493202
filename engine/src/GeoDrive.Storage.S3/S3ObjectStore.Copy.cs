using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Storage.S3;

public sealed partial class S3ObjectStore
{
    /// <summary>
    /// Sets the object tags given with <paramref name="metadata"/> (if any) on an object made by a copy or a multipart
    /// upload: Ceph RGW keeps neither a copy's nor a multipart upload's tags, so they are put apart, everywhere alike.
    /// </summary>
    private async Task PutObjectTagsAsync(string key, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken)
    {
        if (!metadata.TryGetValue(ObjectTagging.MetadataKey, out var tagging))
        {
            return;
        }
        var tagSet = ObjectTagging.Parse(tagging).Select(t => new Tag { Key = t.Key, Value = t.Value }).ToList();
        await OnAnyEndpointAsync(key, client => client.PutObjectTaggingAsync(
            new PutObjectTaggingRequest { BucketName = _options.Bucket, Key = key, Tagging = new Tagging { TagSet = tagSet } }, cancellationToken), cancellationToken);
    }

    /// <summary>
    /// Set once a server answered a copy's condition on its destination with 501, or refused it with both objects as named:
    /// copies go on without one (the engine's look at the destination just before still deciding), as PUTs do where
    /// conditional writes are refused (docs/decisions/0044-copies-and-deletes-name-what-they-may-replace.md).
    /// </summary>
    public bool CopyConditionsRefused { get; private set; }

    public async Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default)
    {
        var source = await HeadAsync(sourceKey, cancellationToken) ?? throw new GeoDriveException(ErrorIds.ObjectNotFound, ErrorKind.ObjectNotFound,
            $"The object '{sourceKey}' to copy to '{destinationKey}' is missing from bucket '{_options.Bucket}'.",
            "Someone deleted it in the bucket; restore it from a bucket version if the file is a stub.");
        if (!string.IsNullOrEmpty(expected.ETag) && !string.Equals(source.ETag?.Trim('"'), expected.ETag.Trim('"'), StringComparison.OrdinalIgnoreCase))
        {
            throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                $"The object '{sourceKey}' was replaced in the bucket; it was not copied to '{destinationKey}'.",
                "Nothing to do: GeoDrive uploads the file's own bytes, or the stub follows the bucket.");
        }
        var sent = CopyConditionsRefused || ConditionalWritesRefused || (IfMatchRefused && !replacing.KeyFree) ? PutCondition.Any : replacing;
        try
        {
            await CopyOnceAsync(source, destinationKey, expected, metadata, observer, sent, cancellationToken);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch && !sent.IsAny)
        {
            if (Satisfies(sent, await HeadAsync(destinationKey, cancellationToken))
                && await HeadAsync(sourceKey, cancellationToken) is { } still && (string.IsNullOrEmpty(expected.ETag) || Satisfies(PutCondition.Matching(expected.ETag), still)))
            {
                // Refused though both are as named (as Ceph 16 does with a PUT's If-Match in a bucket that keeps versions):
                // such a server gets copies without the condition, or the copy would be refused for good.
                CopyConditionsRefused = true;
                await CopyOnceAsync(source, destinationKey, expected, metadata, observer, PutCondition.Any, cancellationToken);
            }
            else
            {
                throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                    $"The object '{destinationKey}' in bucket '{_options.Bucket}' was written (by another site or tool) after this copy looked at it, or '{sourceKey}' was replaced: nothing was copied.",
                    "Nothing to do: GeoDrive looks at both again and, when both changed, keeps both versions.", ex);
            }
        }
        catch (GeoDriveException ex) when (!sent.IsAny && ex.InnerException is AmazonS3Exception { ErrorCode: "NotImplemented" })
        {
            CopyConditionsRefused = true;
            await CopyOnceAsync(source, destinationKey, expected, metadata, observer, PutCondition.Any, cancellationToken);
        }
        if (metadata is not null)
        {
            // The new name's object tags: Ceph RGW drops a copy's tags whatever its tagging directive says.
            await PutObjectTagsAsync(destinationKey, metadata, cancellationToken);
        }
        // What later readers see (a copy's own answer may lack the ETag, as a multipart completion's does on Ceph).
        return await HeadAsync(destinationKey, cancellationToken)
            ?? throw S3Errors.Translate(new InvalidOperationException("the object is missing right after its copy"), _options, _options.Endpoint, destinationKey);
    }

    /// <summary>
    /// One copy, under <paramref name="replacing"/> at the destination: If-None-Match or If-Match on the copy (AWS S3 takes them on a
    /// copy as on a PUT; Ceph 16 and moto ignore them), or on the completion of a copy in parts.
    /// </summary>
    private async Task CopyOnceAsync(ObjectInfo source, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, PutCondition replacing, CancellationToken cancellationToken)
    {
        if (source.Size > _options.MaxSingleCopySize)
        {
            await CopyInPartsAsync(source, destinationKey, expected, metadata ?? source.Metadata, observer, cancellationToken, replacing: replacing);
            return;
        }
        await OnAnyEndpointAsync(destinationKey, client =>
        {
            var request = new CopyObjectRequest
            {
                SourceBucket = _options.Bucket,
                SourceKey = source.Key,
                DestinationBucket = _options.Bucket,
                DestinationKey = destinationKey,
                ETagToMatch = string.IsNullOrEmpty(expected.ETag) ? null : expected.ETag,
                MetadataDirective = metadata is null ? S3MetadataDirective.COPY : S3MetadataDirective.REPLACE,
            };
            Condition(replacing, etag => request.IfMatch = etag, () => request.IfNoneMatch = "*");
            ObjectHeaders.Apply(metadata ?? new Dictionary<string, string>(), request.Metadata);
            return client.CopyObjectAsync(request, cancellationToken);
        }, cancellationToken);
    }

    /// <summary>
    /// Above 5 GiB: a multipart upload whose parts are ranges copied from the source (version <paramref name="sourceVersionId"/>
    /// when given, else the current one), pinned to its ETag; aborted on failure.
    /// </summary>
    private async Task CopyInPartsAsync(ObjectInfo source, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken, string? sourceVersionId = null, PutCondition replacing = default)
    {
        var uploadId = await InitiateAsync(destinationKey, metadata, observer, cancellationToken);
        try
        {
            var partSize = Math.Max(_multipart.PartSize, (source.Size + 9_999) / 10_000);
            var etags = new List<PartETag>();
            for (long offset = 0, number = 1; offset < source.Size; offset += partSize, number++)
            {
                var first = offset;
                var last = Math.Min(source.Size, offset + partSize) - 1;
                var partNumber = (int)number;
                var part = await OnAnyEndpointWithRetriesAsync(destinationKey, client => client.CopyPartAsync(new CopyPartRequest
                {
                    SourceBucket = _options.Bucket,
                    SourceKey = source.Key,
                    SourceVersionId = sourceVersionId,
                    DestinationBucket = _options.Bucket,
                    DestinationKey = destinationKey,
                    UploadId = uploadId,
                    PartNumber = partNumber,
                    FirstByte = first,
                    LastByte = last,
                    ETagToMatch = string.IsNullOrEmpty(expected.ETag) ? null : [expected.ETag],
                }, cancellationToken), cancellationToken);
                etags.Add(new PartETag(partNumber, part.ETag));
            }
            await OnAnyEndpointWithRetriesAsync(destinationKey, client =>
            {
                var complete = new CompleteMultipartUploadRequest
                {
                    BucketName = _options.Bucket,
                    Key = destinationKey,
                    UploadId = uploadId,
                    PartETags = etags,
                };
                Condition(replacing, etag => complete.IfMatch = etag, () => complete.IfNoneMatch = "*");
                return client.CompleteMultipartUploadAsync(complete, cancellationToken);
            }, cancellationToken);
            observer?.Ended(uploadId);
        }
        catch
        {
            await AbortQuietlyAsync(destinationKey, uploadId);
            observer?.Ended(uploadId);
            throw;
        }
    }
}
