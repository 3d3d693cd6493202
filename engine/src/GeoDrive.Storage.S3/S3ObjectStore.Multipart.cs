using System.Buffers;
using Amazon.S3.Model;

namespace GeoDrive.Storage.S3;

public sealed partial class S3ObjectStore
{
    /// <summary>
    /// Parts are read one after another into one rented buffer, so memory stays at one part whatever
    /// the file's size. Any failure or cancellation aborts the upload: no orphaned parts stay behind.
    /// </summary>
    private async Task PutMultipartAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken)
    {
        var initiate = new InitiateMultipartUploadRequest { BucketName = _options.Bucket, Key = key };
        foreach (var (name, value) in metadata)
        {
            initiate.Metadata[name] = value;
        }
        var upload = await S3Errors.GuardAsync(_options, key, () => _client.InitiateMultipartUploadAsync(initiate, cancellationToken));
        var partSize = (int)_options.PartSize;
        var buffer = ArrayPool<byte>.Shared.Rent(partSize);
        try
        {
            var parts = new List<PartETag>();
            long sent = 0;
            for (var number = 1; sent < length; number++)
            {
                var size = (int)Math.Min(partSize, length - sent);
                var read = await ReadFullyAsync(content, buffer.AsMemory(0, size), cancellationToken);
                if (read != size)
                {
                    throw new IOException($"'{key}': the source ended after {sent + read} of {length} bytes (the file changed while uploading).");
                }
                using var body = new MemoryStream(buffer, 0, size, writable: false);
                var part = await S3Errors.GuardAsync(_options, key, () => _client.UploadPartAsync(new UploadPartRequest
                {
                    BucketName = _options.Bucket,
                    Key = key,
                    UploadId = upload.UploadId,
                    PartNumber = number,
                    PartSize = size,
                    InputStream = body,
                    UseChunkEncoding = false,
                }, cancellationToken));
                parts.Add(new PartETag(number, part.ETag));
                sent += size;
            }
            await S3Errors.GuardAsync(_options, key, () => _client.CompleteMultipartUploadAsync(new CompleteMultipartUploadRequest
            {
                BucketName = _options.Bucket,
                Key = key,
                UploadId = upload.UploadId,
                PartETags = parts,
            }, cancellationToken));
        }
        catch
        {
            try
            {
                await _client.AbortMultipartUploadAsync(new AbortMultipartUploadRequest { BucketName = _options.Bucket, Key = key, UploadId = upload.UploadId }, CancellationToken.None);
            }
            catch (Exception)
            {
                // The original failure is what the caller needs; an abort that fails leaves a listed, abortable upload.
            }
            throw;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }
}
