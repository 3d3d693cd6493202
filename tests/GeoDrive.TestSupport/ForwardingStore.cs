using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.TestSupport;

/// <summary>
/// The real store with every call passed through: a test's seam (a spy, a gate, a write at a chosen moment)
/// overrides only what it intercepts. Every PUT reaches the conditional overload that names its body's SHA-256 and every GET the pinned one,
/// so overriding those two sees them all.
/// </summary>
public abstract class ForwardingStore(IObjectStore inner) : IObjectStore
{
    protected IObjectStore Inner => inner;

    public virtual Task CheckAccessAsync(CancellationToken cancellationToken = default) => inner.CheckAccessAsync(cancellationToken);

    public virtual Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default) => inner.HeadAsync(key, cancellationToken);

    public virtual Task<bool> RefusesPutsOverTakenKeysAsync(string probeKey, CancellationToken cancellationToken = default) =>
        inner.RefusesPutsOverTakenKeysAsync(probeKey, cancellationToken);

    public virtual Task<bool?> RefusesConditionalWritesAsync(string probeKey, CancellationToken cancellationToken = default) =>
        inner.RefusesConditionalWritesAsync(probeKey, cancellationToken);

    public virtual Task<bool> RefusesPutsOverOtherVersionsAsync(string probeKey, CancellationToken cancellationToken = default) =>
        inner.RefusesPutsOverOtherVersionsAsync(probeKey, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, null, PutCondition.Any, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer, PutCondition.Any, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, CancellationToken cancellationToken = default) =>
        PutAsync(key, content, length, metadata, observer, condition, contentSha256: null, cancellationToken);

    public virtual Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default) =>
        inner.PutAsync(key, content, length, metadata, observer, condition, contentSha256, cancellationToken);

    public virtual Task<bool> VerifiesPayloadChecksumsAsync(string probeKey, CancellationToken cancellationToken = default) =>
        inner.VerifiesPayloadChecksumsAsync(probeKey, cancellationToken);

    public virtual Task AbortMultipartUploadAsync(string key, string uploadId, CancellationToken cancellationToken = default) =>
        inner.AbortMultipartUploadAsync(key, uploadId, cancellationToken);

    public virtual Task<IReadOnlyList<OpenMultipartUpload>> ListMultipartUploadsAsync(string key, CancellationToken cancellationToken = default) =>
        inner.ListMultipartUploadsAsync(key, cancellationToken);

    public Task GetAsync(string key, Stream destination, long offset = 0, long? length = null, CancellationToken cancellationToken = default) =>
        GetAsync(key, destination, offset, length, default(ObjectVersion), cancellationToken);

    public virtual Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default) =>
        inner.GetAsync(key, destination, offset, length, expected, cancellationToken);

    public virtual Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, PutCondition replacing = default, CancellationToken cancellationToken = default) =>
        inner.CopyAsync(sourceKey, destinationKey, expected, metadata, observer, replacing, cancellationToken);

    public virtual IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default) =>
        inner.ListAsync(prefix, recursive, cancellationToken);

    public virtual Task<IReadOnlyList<StoredVersion>> ListVersionsAsync(string key, CancellationToken cancellationToken = default) =>
        inner.ListVersionsAsync(key, cancellationToken);

    public virtual Task<ObjectInfo> RestoreVersionAsync(string key, string versionId, IReadOnlyDictionary<string, string> metadataChanges, CancellationToken cancellationToken = default) =>
        inner.RestoreVersionAsync(key, versionId, metadataChanges, cancellationToken);

    public virtual Task<bool?> KeepsVersionsAsync(CancellationToken cancellationToken = default) => inner.KeepsVersionsAsync(cancellationToken);

    public virtual Task DeleteAsync(string key, CancellationToken cancellationToken = default) => inner.DeleteAsync(key, cancellationToken);

    public virtual Task DeleteAsync(string key, string etag, CancellationToken cancellationToken = default) => inner.DeleteAsync(key, etag, cancellationToken);
}
