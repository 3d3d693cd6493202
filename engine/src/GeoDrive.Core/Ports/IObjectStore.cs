using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// An S3-compatible bucket as the engine sees it. Keys are full object keys (prefix included).
/// Implementations translate their SDK's failures into <see cref="Errors.GeoDriveException"/> with the
/// ids of <see cref="Errors.ErrorIds"/>; "endpoint unreachable" must never look like "object missing".
/// </summary>
public interface IObjectStore
{
    /// <summary>Checks endpoint, credentials and bucket; throws EndpointUnreachable, CredentialsRejected, BucketNotFound or AccessDenied.</summary>
    Task CheckAccessAsync(CancellationToken cancellationToken = default);

    /// <summary>Null when the object does not exist (a real 404, never a connection failure).</summary>
    Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>Uploads <paramref name="length"/> bytes from <paramref name="content"/> with user metadata (keys without the x-amz-meta- prefix).</summary>
    Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken = default);

    /// <summary>
    /// As <see cref="PutAsync(string, Stream, long, IReadOnlyDictionary{string, string}, CancellationToken)"/>, telling
    /// <paramref name="observer"/> of a multipart upload's id before its first part, asking it before the completion
    /// (false: the upload is aborted and <see cref="Errors.ErrorIds.SourceChanged"/> thrown) and telling it how the upload ended.
    /// </summary>
    Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, cancellationToken);

    /// <summary>
    /// As the observed <see cref="PutAsync(string, Stream, long, IReadOnlyDictionary{string, string}, IMultipartObserver?, CancellationToken)"/>,
    /// only over what <paramref name="condition"/> allows: otherwise nothing is written and ObjectMismatch thrown.
    /// </summary>
    Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, CancellationToken cancellationToken = default);

    /// <summary>
    /// As the conditional <see cref="PutAsync(string, Stream, long, IReadOnlyDictionary{string, string}, IMultipartObserver?, PutCondition, CancellationToken)"/>,
    /// with <paramref name="contentSha256"/> the SHA-256 (lower-case hex) the caller computed over exactly the
    /// <paramref name="length"/> bytes it sends: a single PUT is signed with it instead of the body being hashed again, and
    /// a server that checks signed payloads (<see cref="VerifiesPayloadChecksumsAsync"/>) refuses a body that does not match
    /// it, writing nothing. Null, or a store that signs no payloads: as without it.
    /// </summary>
    Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer, condition, cancellationToken);

    /// <summary>Aborts a multipart upload; one that no longer exists counts as aborted.</summary>
    Task AbortMultipartUploadAsync(string key, string uploadId, CancellationToken cancellationToken = default);

    /// <summary>The multipart uploads open in the bucket under exactly <paramref name="key"/> (not under it as a prefix).</summary>
    Task<IReadOnlyList<OpenMultipartUpload>> ListMultipartUploadsAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>Copies the object's bytes (or the range [offset, offset+length)) into <paramref name="destination"/>.</summary>
    Task GetAsync(string key, Stream destination, long offset = 0, long? length = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// As <see cref="GetAsync(string, Stream, long, long?, CancellationToken)"/>, of exactly <paramref name="expected"/>:
    /// throws ObjectMismatch (never mixes bytes) when the object was replaced by another version. Returns the version that
    /// answered as a HEAD would show it (ETag, version id, whole size, metadata), or null for an empty object.
    /// </summary>
    Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default);

    /// <summary>
    /// Copies an object inside the bucket (server side) if the source is still <paramref name="expected"/>
    /// (else ObjectMismatch; ObjectNotFound when it is gone), with <paramref name="metadata"/> as its user metadata
    /// (null: the source's). Large objects are copied in parts, followed by <paramref name="observer"/> as an upload is.
    /// The copy names what it may replace at the destination (<paramref name="replacing"/>), as a PUT does; a server that
    /// takes a copy's conditions (AWS S3) refuses it over anything else (ObjectMismatch), one that ignores them (Ceph 16,
    /// moto) copies. Returns the copy as a HEAD shows it.
    /// </summary>
    Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default);

    /// <summary>Lists objects under a prefix ('/' delimited when <paramref name="recursive"/> is false: only direct children).</summary>
    IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default);

    Task DeleteAsync(string key, CancellationToken cancellationToken = default);

    /// <summary>
    /// Deletes the key's object only while it is the version with <paramref name="etag"/> (If-Match): a server that takes the
    /// condition (AWS S3, moto) refuses it over a version written since (ObjectMismatch), one that ignores it (Ceph 16)
    /// deletes whatever is there. A key that holds nothing is done with.
    /// </summary>
    Task DeleteAsync(string key, string etag, CancellationToken cancellationToken = default);

    /// <summary>Every version and delete marker of exactly <paramref name="key"/> (not keys below it), newest first.</summary>
    Task<IReadOnlyList<StoredVersion>> ListVersionsAsync(string key, CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("This store lists no versions.");

    /// <summary>
    /// Copies version <paramref name="versionId"/> of <paramref name="key"/> over the key (server side): it becomes the
    /// current version, as a new version, and every older one stays. It keeps that version's user metadata, with
    /// <paramref name="metadataChanges"/> set over it. Returns the new current version as a HEAD shows it.
    /// </summary>
    Task<ObjectInfo> RestoreVersionAsync(string key, string versionId, IReadOnlyDictionary<string, string> metadataChanges, CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("This store restores no versions.");

    /// <summary>Whether the bucket keeps versions (versioning enabled); null when the server could not say.</summary>
    Task<bool?> KeepsVersionsAsync(CancellationToken cancellationToken = default) => Task.FromResult<bool?>(null);

    /// <summary>
    /// Whether the server refuses a PUT under If-None-Match: * when the key holds an object (412), as AWS S3, Ceph
    /// RGW and moto do; found out once per store by a probe under <paramref name="probeKey"/> (written, written again
    /// under that condition, deleted). False when the server wrote over it, refused the condition, or could not be
    /// asked: a caller that would rely on the refusal looks first (HEAD) then.
    /// </summary>
    Task<bool> RefusesPutsOverTakenKeysAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult(false);

    /// <summary>
    /// Whether the server refuses every write that would land over another version, whether it asked for a free key or named
    /// the version it replaces: <see cref="RefusesPutsOverTakenKeysAsync"/> and <see cref="RefusesPutsOverOtherVersionsAsync"/>
    /// both. Null until the probe got an answer, where those two say false.
    /// </summary>
    Task<bool?> RefusesConditionalWritesAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult<bool?>(null);

    /// <summary>
    /// Whether the server refuses a single PUT under If-Match when the key holds another version than the one named (412;
    /// AWS S3 answers 404 where the key holds none), and takes it over the named one, as AWS S3, Ceph RGW (in a bucket
    /// without versions) and moto do; found out by the probe of <see cref="RefusesPutsOverTakenKeysAsync"/>, asked only
    /// where that one holds. False when the server wrote over the key, refused conditions, refuses If-Match even over the
    /// version it names (Ceph RGW in a bucket that keeps versions), or could not be asked: then a caller that would rely on
    /// the refusal looks first (HEAD).
    /// </summary>
    Task<bool> RefusesPutsOverOtherVersionsAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult(false);

    /// <summary>
    /// Whether the server refuses a single PUT whose body does not match the SHA-256 it was signed with
    /// (x-amz-content-sha256), as AWS S3 and Ceph RGW do (XAmzContentSHA256Mismatch); found out once per store by a probe
    /// under <paramref name="probeKey"/> (one byte signed with the hash of none; deleted if the server took it). When
    /// true, a PUT given its body's SHA-256 is verified by the server as it arrives, and accepted means stored as sent.
    /// False when the server took the probe or could not be asked (asked again next time).
    /// </summary>
    Task<bool> VerifiesPayloadChecksumsAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult(false);
}

/// <summary>
/// Follows one multipart upload for its owner. The owner journals the upload before it is started, so that
/// neither a crash nor an answer lost on the way back (the server started an upload whose id the client never
/// heard) leaves an upload open that nobody knows of: once it ended, the owner aborts whatever is still open
/// under the key.
/// </summary>
public interface IMultipartObserver
{
    /// <summary>The upload is about to be started (before the request goes out). Durable when it returns.</summary>
    void Starting();

    /// <summary>The server started the upload and answered with its id; called before its first part is sent.</summary>
    void Started(string uploadId);

    /// <summary>Asked once every part is sent, before the completion: false aborts the upload (its source changed).</summary>
    bool StillWanted();

    /// <summary>The upload ended, completed, aborted or failed (<paramref name="uploadId"/> null when no start was ever answered).</summary>
    void Ended(string? uploadId);
}

/// <summary>A multipart upload open in the bucket, as a listing of uploads shows it.</summary>
public sealed record OpenMultipartUpload(string Key, string UploadId);
