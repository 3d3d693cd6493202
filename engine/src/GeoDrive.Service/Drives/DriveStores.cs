using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Model;
using GeoDrive.Storage.S3;

namespace GeoDrive.Service.Drives;

/// <summary>The one place a drive's object store is built from its definition and credential (and policy, for its transfer settings).</summary>
internal static class DriveStores
{
    /// <summary>The drive's store, for its host.</summary>
    public static S3ObjectStore Open(DriveDefinition definition, DriveCredential credential, PolicyEvaluator? policy = null) =>
        new(Options(definition, credential, policy));

    /// <summary>
    /// Asks the bucket whether the drive could use it, before anything is kept: with <paramref name="endpoints"/> (first
    /// the primary) in place of the definition's when given.
    /// </summary>
    public static async Task ProbeAsync(DriveDefinition definition, DriveCredential credential, string[]? endpoints, CancellationToken cancellationToken)
    {
        using var probe = new S3ObjectStore(Options(definition, credential, endpoints: endpoints is { Length: > 0 } ? endpoints : null));
        await probe.CheckAccessAsync(cancellationToken);
    }

    /// <summary>transfer.multipart of a policy, as the store takes it (the threshold never below one part).</summary>
    public static MultipartTransfer Multipart(PolicyEvaluator? policy) => new(
        Math.Max(policy?.Policy.MultipartThreshold.Value ?? PolicyDefaults.MultipartThreshold, policy?.Policy.PartSize.Value ?? PolicyDefaults.PartSize),
        policy?.Policy.PartSize.Value ?? PolicyDefaults.PartSize,
        policy?.Policy.MultipartUploadThreads.Value ?? PolicyDefaults.MultipartUploadThreads);

    /// <param name="endpoints">In place of the definition's endpoints (the first is the primary), for a probe of new ones.</param>
    public static S3StoreOptions Options(DriveDefinition definition, DriveCredential credential, PolicyEvaluator? policy = null, string[]? endpoints = null) =>
        Options(definition, credential, policy, endpoints, Multipart(policy));

    private static S3StoreOptions Options(DriveDefinition definition, DriveCredential credential, PolicyEvaluator? policy, string[]? endpoints, MultipartTransfer multipart) => new()
    {
        MultipartThreshold = multipart.Threshold,
        PartSize = multipart.PartSize,
        MultipartUploadThreads = multipart.UploadThreads,
        // Every upload and its parts, and every recall and its ranges, may hold a connection at once.
        MaxConnectionsPerEndpoint = Math.Max(16,
            ((policy?.Policy.UploadThreads.Value ?? PolicyDefaults.UploadThreads) * (policy?.Policy.MultipartUploadThreads.Value ?? PolicyDefaults.MultipartUploadThreads))
            + ((policy?.Policy.RestoreThreads.Value ?? PolicyDefaults.RestoreThreads) * (policy?.Policy.MultipartRestoreThreads.Value ?? PolicyDefaults.MultipartRestoreThreads))),
        Endpoint = new Uri(endpoints?[0] ?? definition.Endpoint),
        AdditionalEndpoints = (endpoints?[1..] ?? definition.AdditionalEndpoints).Select(u => new Uri(u)).ToArray(),
        Bucket = definition.Bucket,
        Prefix = definition.Prefix,
        Region = definition.Region,
        ForcePathStyle = definition.ForcePathStyle,
        AccessKey = credential.AccessKey,
        SecretKey = credential.SecretKey,
    };
}
