using System.Net.Http.Headers;
using Amazon.S3.Util;
using GeoDrive.Core.Model;

namespace GeoDrive.Storage.S3;

/// <summary>
/// The hot path's two requests, a single PUT and a ranged GET, signed here (<see cref="SigV4Signer"/>) and sent on the
/// endpoint's own HTTP client, without the AWS SDK's request pipeline: per small request that pipeline (endpoint rules, auth
/// scheme, marshalling, retry handlers) cost more of the service's CPU than the request itself. Only the happy path is
/// taken here: an answer other than success is left to the SDK, which asks again and turns the refusal into the store's
/// errors as for every other request (docs/decisions/0030-own-requests-for-the-hot-path.md). So a conflict or a
/// failure costs one more request, and nothing about errors, retries or failover changes.
/// </summary>
internal sealed class DirectRequests(S3StoreOptions options)
{
    private readonly SigV4Signer _signer = new(options.AccessKey, options.SecretKey, options.Region);
    private long _answered;

    /// <summary>How many requests this path answered (tests tell by it that the path is taken).</summary>
    public long Answered => Interlocked.Read(ref _answered);

    /// <summary>
    /// Whether a request for <paramref name="key"/> at <paramref name="endpoint"/> can go this way: path-style addressing
    /// at the endpoint's root, and a key whose every segment is a plain name (an empty, "." or ".." segment is left to the
    /// SDK, whose way of sending it the rest of the store already relies on).
    /// </summary>
    public bool Addresses(Uri endpoint, string key)
    {
        if (!options.ForcePathStyle || endpoint.AbsolutePath != "/" || key.Length == 0)
        {
            return false;
        }
        foreach (var range in key.AsSpan().Split('/'))
        {
            if (key.AsSpan()[range] is "" or "." or "..")
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>
    /// PUTs <paramref name="body"/> under <paramref name="condition"/>; the answer's ETag and version id when the server
    /// stored it, null when the request is not for this path or the server did not take it (the caller then asks the SDK).
    /// </summary>
    public async Task<(string? ETag, string? VersionId)?> TryPutAsync(
        HttpClient http, Uri endpoint, string key, ArraySegment<byte> body, IReadOnlyDictionary<string, string> metadata,
        PutCondition condition, string? contentSha256, CancellationToken cancellationToken)
    {
        if (!Addresses(endpoint, key) || !PlainHeaders(metadata))
        {
            return null;
        }
        var path = SigV4Signer.CanonicalPath(options.Bucket, key);
        using var request = new HttpRequestMessage(HttpMethod.Put, Address(endpoint, path, ""));
        request.Content = new ByteArrayContent(body.Array!, body.Offset, body.Count);
        // As the SDK sends it (DirectRequestsTests compare): the type named by the key's extension, text/plain without one.
        var extension = Path.GetExtension(key);
        request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse(extension.Length == 0 ? "text/plain" : AmazonS3Util.MimeTypeFromExtension(extension));
        foreach (var (name, value) in metadata)
        {
            request.Headers.TryAddWithoutValidation("x-amz-meta-" + name.ToLowerInvariant(), value);
        }
        S3ObjectStore.Condition(condition, etag => request.Headers.TryAddWithoutValidation("If-Match", etag), () => request.Headers.TryAddWithoutValidation("If-None-Match", "*"));
        var sha256 = contentSha256 ?? Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(body));
        _signer.Sign(request, path, "", sha256, TimeProvider.System.GetUtcNow());
        // Headers only: a refusal's XML is the SDK's to read when it asks again.
        using var response = await SendAsync(http, request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
        if (response is not { IsSuccessStatusCode: true })
        {
            return null;
        }
        Interlocked.Increment(ref _answered);
        return (Header(response, "ETag"), Header(response, "x-amz-version-id"));
    }

    /// <summary>
    /// A GET of <paramref name="range"/> ("bytes=a-b" or "bytes=a-"; null: the whole object) of the version
    /// <paramref name="expected"/> names; the answer with its body still to read when the server sent the bytes, null
    /// otherwise (the caller then asks the SDK).
    /// </summary>
    public async Task<HttpResponseMessage?> TryGetAsync(HttpClient http, Uri endpoint, string key, string? range, ObjectVersion expected, CancellationToken cancellationToken)
    {
        if (!Addresses(endpoint, key))
        {
            return null;
        }
        var path = SigV4Signer.CanonicalPath(options.Bucket, key);
        var query = "";
        if (string.IsNullOrEmpty(expected.ETag) && !string.IsNullOrEmpty(expected.VersionId))
        {
            query = "versionId=" + SigV4Signer.EncodeQueryValue(expected.VersionId);
        }
        using var request = new HttpRequestMessage(HttpMethod.Get, Address(endpoint, path, query));
        if (range is not null)
        {
            request.Headers.TryAddWithoutValidation("Range", range);
        }
        if (!string.IsNullOrEmpty(expected.ETag))
        {
            request.Headers.TryAddWithoutValidation("If-Match", expected.ETag);
        }
        _signer.Sign(request, path, query, SigV4Signer.EmptySha256, TimeProvider.System.GetUtcNow());
        var response = await SendAsync(http, request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
        if (response is not { IsSuccessStatusCode: true })
        {
            response?.Dispose();
            return null;
        }
        Interlocked.Increment(ref _answered);
        return response;
    }

    /// <summary>A header's value as the server sent it, or null.</summary>
    public static string? Header(HttpResponseMessage response, string name) =>
        response.Headers.NonValidated.TryGetValues(name, out var values) || response.Content.Headers.NonValidated.TryGetValues(name, out values)
            ? values.FirstOrDefault()
            : null;

    /// <summary>The user metadata of an answer (x-amz-meta-*), named without the prefix and in lower case.</summary>
    public static Dictionary<string, string> Metadata(HttpResponseMessage response)
    {
        var result = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var (name, values) in response.Headers.NonValidated)
        {
            if (name.StartsWith("x-amz-meta-", StringComparison.OrdinalIgnoreCase))
            {
                result[name["x-amz-meta-".Length..].ToLowerInvariant()] = string.Join(',', values);
            }
        }
        return result;
    }

    private static async Task<HttpResponseMessage?> SendAsync(HttpClient http, HttpRequestMessage request, HttpCompletionOption completion, CancellationToken cancellationToken)
    {
        try
        {
            return await http.SendAsync(request, completion, cancellationToken);
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // The caller's own cancellation, said as such: HttpClient's carries the socket's failure inside, which the store's
            // errors would take for an unreachable endpoint.
            throw new OperationCanceledException(cancellationToken);
        }
        catch (Exception)
        {
            // Unanswered (refused connection, reset, an idle endpoint): the SDK asks again, with its retries and failover.
            return null;
        }
    }

    private static Uri Address(Uri endpoint, string path, string query) =>
        // Sent exactly as signed: no dot-segment or escape is rewritten on the way.
        new($"{endpoint.Scheme}://{endpoint.Authority}{path}{(query.Length > 0 ? "?" + query : "")}",
            new UriCreationOptions { DangerousDisablePathAndQueryCanonicalization = true });

    /// <summary>Whether every metadata header is printable ASCII with nothing to trim or fold (the engine's always are); others go through the SDK.</summary>
    private static bool PlainHeaders(IReadOnlyDictionary<string, string> metadata)
    {
        foreach (var (name, value) in metadata)
        {
            if (name == ObjectTagging.MetadataKey || name.Length == 0 || value.Length == 0 || value[0] == ' ' || value[^1] == ' ' || value.Contains("  ", StringComparison.Ordinal))
            {
                return false;
            }
            foreach (var c in name)
            {
                if (c is <= ' ' or > '~' or ':')
                {
                    return false;
                }
            }
            foreach (var c in value)
            {
                if (c is < ' ' or > '~')
                {
                    return false;
                }
            }
        }
        return true;
    }
}
