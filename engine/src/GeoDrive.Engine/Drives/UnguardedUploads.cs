using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Says once, as an error event with a remedy, that nothing guards this drive's uploads against replacing a version another
/// site or tool wrote: the server does not refuse conditional writes (the store's write probe, or a 501 since) and the bucket
/// keeps no versions. An upload then looks at the bucket (HEAD) and PUTs without a condition the server would check; a version
/// written between the two is replaced, and with no versions kept nothing brings it back (docs/decisions/0029-unguarded-uploads.md).
/// Asked before each upload that compares first (where the PUT is its own comparison, the server refuses), until it has
/// been said or the bucket was found to keep versions; once the probe has answered, an ask
/// is answered from the store's memory, with no request.
/// </summary>
internal sealed class UnguardedUploads(IObjectStore store, string probeKey, Action<string, string> warn)
{
    private int _settled;

    private const string Remedy =
        "Turn versioning on for the bucket (S3: PutBucketVersioning, Status Enabled): a replaced version then stays in the bucket's history and Restore-CloudFile brings it back. Or serve the bucket from an S3 server that refuses conditional writes over another version (AWS S3, Ceph RGW, MinIO).";

    public async Task CheckAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _settled) != 0 || await store.RefusesConditionalWritesAsync(probeKey, cancellationToken) != false)
        {
            // Guarded, or not known yet (the probe got no answer): asked again at the next upload.
            return;
        }
        if (await store.KeepsVersionsAsync(cancellationToken) is not { } keepsVersions || Interlocked.Exchange(ref _settled, 1) != 0)
        {
            return;
        }
        if (!keepsVersions)
        {
            warn(
                "The S3 server does not refuse conditional writes (If-None-Match, If-Match) and this drive's bucket keeps no versions: a version another site or tool writes to an object in the moment between this site's look at it and its upload is replaced, and lost.",
                Remedy);
        }
    }
}
