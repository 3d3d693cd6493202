using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace GeoDrive.Storage.S3;

/// <summary>
/// AWS Signature Version 4 for the store's own requests (<see cref="DirectRequests"/>): the canonical request, the string to
/// sign and the Authorization header, as the S3 API reference's "Authenticating Requests (AWS Signature Version 4)" sets
/// them out. The day's signing key is derived once a day. Signs host, x-amz-content-sha256, x-amz-date and every other
/// x-amz-* header the request carries; the conditions and the range travel unsigned (S3 allows it).
/// </summary>
internal sealed class SigV4Signer(string accessKey, string secretKey, string region)
{
    public const string EmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    private readonly Lock _gate = new();
    private (string Day, byte[] Key)? _signingKey;

    /// <summary>
    /// Adds x-amz-date, x-amz-content-sha256 and Authorization to <paramref name="request"/>, sent to
    /// <paramref name="path"/> and <paramref name="query"/> in canonical form (each path segment and each query name and value
    /// percent-encoded once, the query sorted by name; see <see cref="CanonicalPath"/>).
    /// </summary>
    public void Sign(HttpRequestMessage request, string path, string query, string payloadSha256, DateTimeOffset now)
    {
        var uri = request.RequestUri!;
        var amzDate = now.UtcDateTime.ToString("yyyyMMdd'T'HHmmss'Z'", CultureInfo.InvariantCulture);
        var day = amzDate[..8];
        request.Headers.TryAddWithoutValidation("x-amz-date", amzDate);
        request.Headers.TryAddWithoutValidation("x-amz-content-sha256", payloadSha256);

        var headers = new SortedDictionary<string, string>(StringComparer.Ordinal)
        {
            ["host"] = uri.Authority,
        };
        foreach (var (name, values) in request.Headers.NonValidated)
        {
            if (name.StartsWith("x-amz-", StringComparison.OrdinalIgnoreCase))
            {
                headers[name.ToLowerInvariant()] = string.Join(',', values);
            }
        }
        var signedHeaders = string.Join(';', headers.Keys);
        var canonical = new StringBuilder(512)
            .Append(request.Method.Method).Append('\n')
            .Append(path).Append('\n')
            .Append(query).Append('\n');
        foreach (var (name, value) in headers)
        {
            canonical.Append(name).Append(':').Append(value.Trim()).Append('\n');
        }
        canonical.Append('\n').Append(signedHeaders).Append('\n').Append(payloadSha256);

        var scope = $"{day}/{region}/s3/aws4_request";
        var stringToSign = $"AWS4-HMAC-SHA256\n{amzDate}\n{scope}\n{Hex(SHA256.HashData(Encoding.UTF8.GetBytes(canonical.ToString())))}";
        var signature = Hex(HMACSHA256.HashData(SigningKey(day), Encoding.UTF8.GetBytes(stringToSign)));
        request.Headers.TryAddWithoutValidation("Authorization",
            $"AWS4-HMAC-SHA256 Credential={accessKey}/{scope}, SignedHeaders={signedHeaders}, Signature={signature}");
    }

    /// <summary>
    /// The path of <paramref name="bucket"/>/<paramref name="key"/> (path-style) with every byte but the unreserved
    /// characters and '/' percent-encoded, as S3 canonicalizes it (once, not twice as other services do).
    /// </summary>
    public static string CanonicalPath(string bucket, string key)
    {
        var path = new StringBuilder(bucket.Length + key.Length * 3 + 2).Append('/');
        Encode(path, bucket, keepSlash: false);
        path.Append('/');
        Encode(path, key, keepSlash: true);
        return path.ToString();
    }

    /// <summary>A query name or value percent-encoded as SigV4's canonical query wants it.</summary>
    public static string EncodeQueryValue(string value) => Encode(new StringBuilder(value.Length * 3), value, keepSlash: false).ToString();

    private static StringBuilder Encode(StringBuilder into, string value, bool keepSlash)
    {
        Span<byte> utf8 = stackalloc byte[4];
        foreach (var rune in value.EnumerateRunes())
        {
            var count = rune.EncodeToUtf8(utf8);
            for (var i = 0; i < count; i++)
            {
                var b = utf8[i];
                if (b is >= (byte)'A' and <= (byte)'Z' or >= (byte)'a' and <= (byte)'z' or >= (byte)'0' and <= (byte)'9' or (byte)'-' or (byte)'.' or (byte)'_' or (byte)'~'
                    || (keepSlash && b == (byte)'/'))
                {
                    into.Append((char)b);
                }
                else
                {
                    into.Append('%').Append(HexUpper[b >> 4]).Append(HexUpper[b & 0xF]);
                }
            }
        }
        return into;
    }

    private const string HexUpper = "0123456789ABCDEF";

    private byte[] SigningKey(string day)
    {
        lock (_gate)
        {
            if (_signingKey is { } known && known.Day == day)
            {
                return known.Key;
            }
            var key = HMACSHA256.HashData(Encoding.UTF8.GetBytes("AWS4" + secretKey), Encoding.UTF8.GetBytes(day));
            key = HMACSHA256.HashData(key, Encoding.UTF8.GetBytes(region));
            key = HMACSHA256.HashData(key, "s3"u8);
            key = HMACSHA256.HashData(key, "aws4_request"u8);
            _signingKey = (day, key);
            return key;
        }
    }

    private static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexStringLower(bytes);
}
