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

    public async Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default)
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
        if (source.Size > _options.MaxSingleCopySize)
        {
            await CopyInPartsAsync(source, destinationKey, expected, metadata ?? source.Metadata, observer, cancellationToken);
        }
        else
        {
            await OnAnyEndpointAsync(destinationKey, client =>
            {
                var request = new CopyObjectRequest
                {
                    SourceBucket = _options.Bucket,
                    SourceKey = sourceKey,
                    DestinationBucket = _options.Bucket,
                    DestinationKey = destinationKey,
                    ETagToMatch = string.IsNullOrEmpty(expected.ETag) ? null : expected.ETag,
                    MetadataDirective = metadata is null ? S3MetadataDirective.COPY : S3MetadataDirective.REPLACE,
                };
                ObjectHeaders.Apply(metadata ?? new Dictionary<string, string>(), request.Metadata);
                return client.CopyObjectAsync(request, cancellationToken);
            }, cancellationToken);
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
    /// Above 5 GiB: a multipart upload whose parts are ranges copied from the source (version <paramref name="sourceVersionId"/>
    /// when given, else the current one), pinned to its ETag; aborted on failure.
    /// </summary>
    private async Task CopyInPartsAsync(ObjectInfo source, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken, string? sourceVersionId = null)
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
            await OnAnyEndpointWithRetriesAsync(destinationKey, client => client.CompleteMultipartUploadAsync(new CompleteMultipartUploadRequest
            {
                BucketName = _options.Bucket,
                Key = destinationKey,
                UploadId = uploadId,
                PartETags = etags,
            }, cancellationToken), cancellationToken);
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
