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

    /// <summary>Copies the object's bytes (or the range [offset, offset+length)) into <paramref name="destination"/>.</summary>
    Task GetAsync(string key, Stream destination, long offset = 0, long? length = null, CancellationToken cancellationToken = default);

    /// <summary>Lists objects under a prefix ('/' delimited when <paramref name="recursive"/> is false: only direct children).</summary>
    IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default);

    Task DeleteAsync(string key, CancellationToken cancellationToken = default);
}
