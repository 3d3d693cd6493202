using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.TestSupport;

/// <summary>
/// The real store, counting the HEADs and GETs the engine asks of the bucket, per key (a spy for
/// <see cref="DriveRig"/>'s storeInFront: every call goes through unchanged).
/// </summary>
public sealed class RequestCountingStore(IObjectStore inner) : IObjectStore
{
    private readonly ConcurrentDictionary<string, int> _heads = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, int> _gets = new(StringComparer.Ordinal);

    public int Heads(string key) => _heads.GetValueOrDefault(key);

    public int Gets(string key) => _gets.GetValueOrDefault(key);

    public Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default)
    {
        _heads.AddOrUpdate(key, 1, (_, n) => n + 1);
        return inner.HeadAsync(key, cancellationToken);
    }

    public Task GetAsync(string key, Stream destination, long offset = 0, long? length = null, CancellationToken cancellationToken = default) =>
        GetAsync(key, destination, offset, length, default(ObjectVersion), cancellationToken);

    public Task CheckAccessAsync(CancellationToken cancellationToken = default) => inner.CheckAccessAsync(cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, CancellationToken cancellationToken = default) =>
        inner.PutAsync(key, content, length, metadata, cancellationToken);

    public IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default) =>
        inner.ListAsync(prefix, recursive, cancellationToken);

    public Task DeleteAsync(string key, CancellationToken cancellationToken = default) => inner.DeleteAsync(key, cancellationToken);

    public Task<ObjectInfo> CopyAsync(string sourceKey, string destinationKey, ObjectVersion expected, IReadOnlyDictionary<string, string>? metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default) =>
        inner.CopyAsync(sourceKey, destinationKey, expected, metadata, observer, cancellationToken);

    public Task GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
    {
        _gets.AddOrUpdate(key, 1, (_, n) => n + 1);
        return inner.GetAsync(key, destination, offset, length, expected, cancellationToken);
    }

    public Task AbortMultipartUploadAsync(string key, string uploadId, CancellationToken cancellationToken = default) =>
        inner.AbortMultipartUploadAsync(key, uploadId, cancellationToken);

    public Task<IReadOnlyList<OpenMultipartUpload>> ListMultipartUploadsAsync(string key, CancellationToken cancellationToken = default) =>
        inner.ListMultipartUploadsAsync(key, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, CancellationToken cancellationToken = default) =>
        inner.PutAsync(key, content, length, metadata, observer, cancellationToken);

    public Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, CancellationToken cancellationToken = default) =>
        inner.PutAsync(key, content, length, metadata, observer, condition, cancellationToken);
}
