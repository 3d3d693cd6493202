using GeoDrive.Core.Model;
using System.Net;
using System.Net.Sockets;
using Amazon.Runtime;
using Amazon.S3;
using GeoDrive.Core.Errors;

namespace GeoDrive.Storage.S3;

/// <summary>
/// Turns SDK and network failures into GeoDrive's errors. "Endpoint unreachable" is never reported
/// as "object missing", and no message carries the secret key.
/// </summary>
internal static class S3Errors
{
    public static async Task<T> GuardAsync<T>(S3StoreOptions options, Uri endpoint, string? key, Func<Task<T>> call)
    {
        try
        {
            return await call();
        }
        catch (Exception ex) when (ex is not OperationCanceledException and not GeoDriveException and not IOException || IsTransport(ex) || IsTimeout(ex))
        {
            throw Translate(ex, options, endpoint, key);
        }
    }

    /// <summary>True for failures that say nothing about the object: the endpoint could not be reached.</summary>
    public static bool IsUnreachable(GeoDriveException ex) => ex.ErrorId == ErrorIds.EndpointUnreachable;

    public static GeoDriveException Translate(Exception ex, S3StoreOptions options, Uri endpoint, string? key)
    {
        var where = $"'{endpoint}' (bucket '{options.Bucket}')";
        if (ex is AmazonS3Exception s3)
        {
            return s3.ErrorCode switch
            {
                "InvalidAccessKeyId" or "SignatureDoesNotMatch" or "InvalidToken" or "AuthorizationHeaderMalformed" => new GeoDriveException(
                    ErrorIds.CredentialsRejected, ErrorKind.PermissionDenied,
                    $"The S3 server at {where} rejected the credentials of access key '{AccessKeys.Mask(options.AccessKey)}' ({s3.ErrorCode}).",
                    "Check the access key and the secret key (pass them again with -Credential).", ex),
                "AccessDenied" or "AllAccessDisabled" => new GeoDriveException(
                    ErrorIds.AccessDenied, ErrorKind.PermissionDenied,
                    $"Access key '{AccessKeys.Mask(options.AccessKey)}' may not use bucket '{options.Bucket}' at '{endpoint}' (AccessDenied).",
                    "Grant that S3 user read and write access to the bucket, or use another key.", ex),
                "NoSuchBucket" => new GeoDriveException(
                    ErrorIds.BucketNotFound, ErrorKind.ObjectNotFound,
                    $"The bucket '{options.Bucket}' does not exist at '{endpoint}'.",
                    "Create the bucket first (GeoDrive never creates buckets), or correct -Bucket.", ex),
                "PreconditionFailed" or "NoSuchVersion" => new GeoDriveException(
                    ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                    $"The object '{key}' in bucket '{options.Bucket}' was replaced by another version while it was being read.",
                    "Nothing is mixed: the read stops. Open the file again to get the bucket's current version.", ex),
                "XAmzContentSHA256Mismatch" or "BadDigest" => new GeoDriveException(
                    ErrorIds.StoreError, ErrorKind.ResourceUnavailable,
                    $"The S3 server at {where} refused the bytes sent for '{key}': they did not match their checksum on arrival ({s3.ErrorCode}); nothing was written.",
                    "GeoDrive sends them again with backoff; if this repeats, something on the network path (a proxy, a faulty NIC) changes request bodies.", ex),
                "NoSuchKey" => new GeoDriveException(
                    ErrorIds.ObjectNotFound, ErrorKind.ObjectNotFound,
                    $"The object '{key}' is missing from bucket '{options.Bucket}'.",
                    "Restore it from a bucket version or a backup; the local stub keeps its name and size.", ex),
                _ when s3.StatusCode == HttpStatusCode.Forbidden => new GeoDriveException(
                    ErrorIds.CredentialsRejected, ErrorKind.PermissionDenied,
                    $"The S3 server at {where} refused access key '{AccessKeys.Mask(options.AccessKey)}' (403 {s3.ErrorCode}).",
                    "Check the access key, the secret key and the user's rights on the bucket.", ex),
                _ => new GeoDriveException(
                    ErrorIds.StoreError, ErrorKind.ResourceUnavailable,
                    $"The S3 server at {where} failed on '{key}': {(int)s3.StatusCode} {s3.ErrorCode} {s3.Message}",
                    "GeoDrive retries with backoff; if it persists, check the S3 server's health.", ex),
            };
        }
        if (IsTimeout(ex))
        {
            return new GeoDriveException(
                ErrorIds.EndpointUnreachable, ErrorKind.ConnectionError,
                $"The S3 endpoint '{endpoint}' did not answer: {Root(ex).Message}.",
                "The server or something on the way (load balancer, proxy, firewall) holds connections without answering: check the S3 server's health and the network path; GeoDrive tries again by itself.", ex);
        }
        if (IsTransport(ex) || ex is TaskCanceledException || ex is TimeoutException)
        {
            return new GeoDriveException(
                ErrorIds.EndpointUnreachable, ErrorKind.ConnectionError,
                $"The S3 endpoint '{endpoint}' cannot be reached: {Root(ex).Message}",
                "Check the endpoint URL and port, that the S3 server is running, and the network and firewall between here and there.", ex);
        }
        return new GeoDriveException(
            ErrorIds.StoreError, ErrorKind.NotSpecified,
            $"An S3 request to {where} for '{key}' failed: {ex.Message}",
            "See the service log; GeoDrive retries uploads with backoff.", ex);
    }

    /// <summary>True when the request failed because nothing moved for the idle timeout (<see cref="IdleTimeoutHandler"/>).</summary>
    public static bool IsTimeout(Exception ex)
    {
        for (var e = ex; e is not null; e = e.InnerException)
        {
            if (e is TimeoutException)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// True when the request failed on the way to or from the server (no connection, a reset, a broken TLS or
    /// proxy tunnel, an answer cut off); never for a request the client could not make (a header it refuses to
    /// send, say), which says nothing about the endpoint.
    /// </summary>
    private static bool IsTransport(Exception ex)
    {
        for (var e = ex; e is not null; e = e.InnerException)
        {
            if (e is SocketException || (e is IOException && e.InnerException is SocketException))
            {
                return true;
            }
            if (e is HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError
                or HttpRequestError.SecureConnectionError or HttpRequestError.ResponseEnded or HttpRequestError.ProxyTunnelError })
            {
                return true;
            }
        }
        return false;
    }

    private static Exception Root(Exception ex)
    {
        var e = ex;
        while (e.InnerException is not null)
        {
            e = e.InnerException;
        }
        return e;
    }
}
