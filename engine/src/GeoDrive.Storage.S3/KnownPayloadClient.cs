using System.Runtime.CompilerServices;
using Amazon.Runtime;
using Amazon.Runtime.Internal;
using Amazon.S3;
using Amazon.S3.Model;

namespace GeoDrive.Storage.S3;

/// <summary>
/// The S3 client the store uses: a PUT whose body's SHA-256 the caller names (<see cref="SignWith"/>) is signed with that
/// hash instead of the SDK hashing the body again. The engine has already hashed a small file's bytes for the object's
/// metadata, so the second pass (a SHA-256 of every byte sent) bought nothing. The server checks the body against the
/// signed hash (x-amz-content-sha256) as it would the SDK's own.
/// </summary>
internal sealed class KnownPayloadClient(AWSCredentials credentials, AmazonS3Config config) : AmazonS3Client(credentials, config)
{
    // Keyed by the request object, not a subclass of it: the SDK resolves a request's endpoint by its type's name, and a
    // PutObjectRequest of another name lost its bucket.
    private static readonly ConditionalWeakTable<AmazonWebServiceRequest, string> Hashes = new();

    /// <summary>Signs <paramref name="request"/> with <paramref name="sha256"/> (lower-case hex), the hash of exactly the bytes it sends.</summary>
    public static void SignWith(PutObjectRequest request, string sha256) => Hashes.AddOrUpdate(request, sha256);

    protected override void CustomizeRuntimePipeline(RuntimePipeline pipeline)
    {
        base.CustomizeRuntimePipeline(pipeline);
        // Before the signer, and inside the retry handler: every try of the request is signed with the hash.
        pipeline.AddHandlerBefore<Signer>(new KnownPayloadHash());
    }

    private sealed class KnownPayloadHash : PipelineHandler
    {
        public override Task<T> InvokeAsync<T>(IExecutionContext executionContext)
        {
            if (Hashes.TryGetValue(executionContext.RequestContext.OriginalRequest, out var sha256))
            {
                executionContext.RequestContext.Request.PrecomputedContentSha256 = sha256;
            }
            return base.InvokeAsync<T>(executionContext);
        }
    }
}
