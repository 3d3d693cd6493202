using System.Net;
using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;

namespace GeoDrive.Storage.S3;

public sealed partial class S3ObjectStore
{
    public async Task<IReadOnlyList<StoredVersion>> ListVersionsAsync(string key, CancellationToken cancellationToken = default)
    {
        // The listing is by prefix, so keys that only begin with this one ("a.txt.bak") come too and are left out. Servers
        // order a key's entries differently (Ceph RGW newest first, moto every version before every delete marker):
        // sorted here, the current one first, then newest first, the server's order kept between equal times.
        var request = new ListVersionsRequest { BucketName = _options.Bucket, Prefix = key, Encoding = EncodingType.Url };
        var versions = new List<StoredVersion>();
        while (true)
        {
            var response = await OnAnyEndpointAsync(key, client => client.ListVersionsAsync(request, cancellationToken), cancellationToken);
            foreach (var v in response.Versions ?? [])
            {
                if (UrlDecoded(v.Key) == key)
                {
                    versions.Add(new StoredVersion(key, string.IsNullOrEmpty(v.VersionId) ? "null" : v.VersionId, v.IsLatest == true, v.IsDeleteMarker == true,
                        v.Size ?? 0, v.IsDeleteMarker == true ? null : v.ETag, Utc(v.LastModified)));
                }
            }
            if (response.IsTruncated != true)
            {
                return [.. versions.OrderByDescending(v => v.IsLatest).ThenByDescending(v => v.LastModifiedUtc)];
            }
            request.KeyMarker = response.NextKeyMarker;
            request.VersionIdMarker = response.NextVersionIdMarker;
        }
    }

    public async Task<ObjectInfo> RestoreVersionAsync(string key, string versionId, IReadOnlyDictionary<string, string> metadataChanges, CancellationToken cancellationToken = default)
    {
        var source = await HeadVersionAsync(key, versionId, cancellationToken);
        var metadata = new Dictionary<string, string>(source.Metadata, StringComparer.OrdinalIgnoreCase);
        foreach (var (name, value) in metadataChanges)
        {
            metadata[name] = value;
        }
        if (source.Size > _options.MaxSingleCopySize)
        {
            await CopyInPartsAsync(source, key, new ObjectVersion(source.ETag, versionId), metadata, observer: null, cancellationToken, sourceVersionId: versionId);
        }
        else
        {
            // The version's own metadata, given again (REPLACE) with the changes: S3 refuses a copy of a key onto itself
            // that changes nothing, and servers differ on whether a source version id counts as a change.
            await OnAnyEndpointAsync(key, client =>
            {
                var request = new CopyObjectRequest
                {
                    SourceBucket = _options.Bucket,
                    SourceKey = key,
                    SourceVersionId = versionId,
                    DestinationBucket = _options.Bucket,
                    DestinationKey = key,
                    MetadataDirective = S3MetadataDirective.REPLACE,
                };
                ObjectHeaders.Apply(metadata, request.Metadata);
                return client.CopyObjectAsync(request, cancellationToken);
            }, cancellationToken);
        }
        await CopyVersionTagsAsync(key, versionId, cancellationToken);
        return await HeadAsync(key, cancellationToken)
            ?? throw S3Errors.Translate(new InvalidOperationException("the object is missing right after its restore"), _options, _options.Endpoint, key);
    }

    public async Task<bool?> KeepsVersionsAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            var response = await OnAnyEndpointAsync(null, client => client.GetBucketVersioningAsync(new GetBucketVersioningRequest { BucketName = _options.Bucket }, cancellationToken), cancellationToken);
            return response.VersioningConfig?.Status == VersionStatus.Enabled;
        }
        catch (GeoDriveException)
        {
            return null;
        }
    }

    private Task<ObjectInfo> HeadVersionAsync(string key, string versionId, CancellationToken cancellationToken) =>
        OnAnyEndpointAsync(key, async client =>
        {
            try
            {
                var response = await client.GetObjectMetadataAsync(new GetObjectMetadataRequest { BucketName = _options.Bucket, Key = key, VersionId = versionId }, cancellationToken);
                return new ObjectInfo(key, response.ContentLength, response.ETag, Utc(response.LastModified), ReadMetadata(response.Metadata), versionId);
            }
            catch (AmazonS3Exception ex) when (ex.StatusCode is HttpStatusCode.NotFound or HttpStatusCode.MethodNotAllowed or HttpStatusCode.BadRequest && ex.ErrorCode != "NoSuchBucket")
            {
                // 405: the version is a delete marker; 400: a version id the server cannot read.
                throw new GeoDriveException(ErrorIds.VersionNotFound, ErrorKind.ObjectNotFound,
                    $"Bucket '{_options.Bucket}' holds no version '{versionId}' of '{key}' that can be brought back (it is missing or a delete marker).",
                    "Get-CloudFileVersion lists the file's versions; name one that is not a delete marker.");
            }
        }, cancellationToken);

    /// <summary>The version's object tags, set on the restored object: a copy keeps none on Ceph RGW.</summary>
    private async Task CopyVersionTagsAsync(string key, string versionId, CancellationToken cancellationToken)
    {
        var tags = await OnAnyEndpointAsync(key, client => client.GetObjectTaggingAsync(
            new GetObjectTaggingRequest { BucketName = _options.Bucket, Key = key, VersionId = versionId }, cancellationToken), cancellationToken);
        if (tags.Tagging is { Count: > 0 } tagSet)
        {
            await OnAnyEndpointAsync(key, client => client.PutObjectTaggingAsync(
                new PutObjectTaggingRequest { BucketName = _options.Bucket, Key = key, Tagging = new Tagging { TagSet = tagSet } }, cancellationToken), cancellationToken);
        }
    }
}
