using GeoDrive.Core.Errors;

namespace GeoDrive.Storage.S3;

/// <summary>Where and how to reach one bucket. Validated once, before the first request.</summary>
public sealed class S3StoreOptions
{
    /// <summary>The first endpoint URL; error messages name the endpoint that failed.</summary>
    public required Uri Endpoint { get; init; }

    /// <summary>More URLs of the same S3 service (other gateway nodes), used round-robin with <see cref="Endpoint"/>.</summary>
    public IReadOnlyList<Uri> AdditionalEndpoints { get; init; } = [];

    public IReadOnlyList<Uri> AllEndpoints => [Endpoint, .. AdditionalEndpoints];

    /// <summary>How long an endpoint that could not be reached sits out before it is probed again (doubling per failure).</summary>
    public TimeSpan EndpointOutTime { get; init; } = TimeSpan.FromSeconds(5);

    public TimeSpan EndpointMaxOutTime { get; init; } = TimeSpan.FromMinutes(2);

    /// <summary>Parts of one multipart upload in flight at once (transfer.multipart.uploadThreads).</summary>
    public int MultipartUploadThreads { get; init; } = 4;

    /// <summary>HTTP connections kept per endpoint: sized to the transfers that run at once.</summary>
    public int MaxConnectionsPerEndpoint { get; init; } = 64;

    /// <summary>The store's clock, for taking endpoints out and back in.</summary>
    public TimeProvider Time { get; init; } = TimeProvider.System;
    public required string Bucket { get; init; }

    /// <summary>The drive's key prefix (informational here: callers pass full keys).</summary>
    public string Prefix { get; init; } = "";

    public required string AccessKey { get; init; }
    public required string SecretKey { get; init; }
    public string Region { get; init; } = "us-east-1";

    /// <summary>http://host/bucket/key rather than http://bucket.host/key: what non-AWS servers need.</summary>
    public bool ForcePathStyle { get; init; } = true;

    /// <summary>Objects larger than this go up as multipart uploads.</summary>
    public long MultipartThreshold { get; init; } = 64L * 1024 * 1024;

    public long PartSize { get; init; } = 16L * 1024 * 1024;

    /// <summary>Objects larger than this are copied in parts (UploadPartCopy): S3 copies at most 5 GiB in one request.</summary>
    public long MaxSingleCopySize { get; init; } = 5L * 1024 * 1024 * 1024;

    /// <summary>How long to wait for a TCP connection before calling the endpoint unreachable.</summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long a request may move no byte at all (none sent, no answer, none received) before it fails
    /// as <c>EndpointUnreachable</c>: how soon a frozen endpoint (connection accepted, never answered) is
    /// noticed. A slow transfer that keeps moving is never cut by it.
    /// </summary>
    public TimeSpan IdleTimeout { get; init; } = TimeSpan.FromSeconds(20);

    /// <summary>The longest one request may take in all, however much it moves (a trickle that never ends).</summary>
    public TimeSpan RequestTimeout { get; init; } = TimeSpan.FromMinutes(30);

    /// <summary>SDK-level retries of one request (5xx, throttling); the engine retries whole transfers itself.</summary>
    public int MaxErrorRetry { get; init; } = 2;

    public void Validate()
    {
        foreach (var endpoint in AllEndpoints)
        {
            if (endpoint is null || !endpoint.IsAbsoluteUri || (endpoint.Scheme != Uri.UriSchemeHttp && endpoint.Scheme != Uri.UriSchemeHttps))
            {
                throw Invalid($"'{endpoint}' is not an http(s) endpoint URL.", "Give the S3 endpoint as a URL, e.g. http://127.0.0.1:9000.");
            }
        }
        if (IdleTimeout <= TimeSpan.Zero || RequestTimeout < IdleTimeout)
        {
            throw Invalid("The idle timeout must be positive and no longer than the request timeout.", "Give the S3 store a positive IdleTimeout below its RequestTimeout.");
        }
        if (MultipartUploadThreads < 1 || MaxConnectionsPerEndpoint < 1)
        {
            throw Invalid("Multipart threads and connections per endpoint must be at least 1.", "Raise transfer.multipart.uploadThreads.");
        }
        if (string.IsNullOrWhiteSpace(Bucket))
        {
            throw Invalid("No bucket was given.", "Name the bucket the drive uses.");
        }
        if (string.IsNullOrEmpty(AccessKey) || string.IsNullOrEmpty(SecretKey))
        {
            throw Invalid("The access key or the secret key is empty.", "Give both keys of an S3 user that may use the bucket.");
        }
        new MultipartTransfer(MultipartThreshold, PartSize, MultipartUploadThreads).Validate();
    }

    private static GeoDriveException Invalid(string message, string remedy) => new(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument, message, remedy);

    // Never let the secret reach a log through ToString.
    public override string ToString() => $"{string.Join(", ", AllEndpoints)} bucket {Bucket} as {Core.Model.AccessKeys.Mask(AccessKey)}";
}

/// <summary>Files above <paramref name="Threshold"/> go up in parts of <paramref name="PartSize"/>, <paramref name="UploadThreads"/> at a time.</summary>
public sealed record MultipartTransfer(long Threshold, long PartSize, int UploadThreads)
{
    public void Validate()
    {
        if (UploadThreads < 1)
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument, "Multipart threads must be at least 1.", "Raise transfer.multipart.uploadThreads.");
        }
        if (PartSize < 5L * 1024 * 1024 || Threshold < PartSize)
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                "Multipart part size must be at least 5 MiB and no larger than the threshold.", "S3 refuses smaller parts; raise partSize or the threshold.");
        }
    }
}
