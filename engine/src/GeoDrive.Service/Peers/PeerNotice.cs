using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace GeoDrive.Service.Peers;

/// <summary>
/// What a site tells its peers (POST /v1/peer/notices): the drive's bucket and prefix and the keys it changed there.
/// A hint for the receiver, never the truth: it syncs those folders from the bucket (docs/decisions/0020-peers-told-of-changes.md).
/// </summary>
public sealed class PeerNotice
{
    public required string Bucket { get; init; }
    public string Prefix { get; init; } = "";
    /// <summary>The sending drive's name, for the receiver's events and log.</summary>
    public string From { get; init; } = "";
    public required PeerNoticeChange[] Changes { get; init; }
}

/// <summary>One change: "put", "delete", or "rename" (<see cref="FromKey"/> to <see cref="Key"/>).</summary>
public sealed class PeerNoticeChange
{
    public required string Kind { get; init; }
    public required string Key { get; init; }
    public string? FromKey { get; init; }
}

/// <summary>
/// The signature of a notice: HMAC-SHA256 under the drive's peer key over a version tag, the sender's time (Unix
/// milliseconds), a random nonce and the body's bytes, so neither the body nor its time nor its nonce can be changed
/// without the key.
/// </summary>
public static class PeerSignature
{
    public const string TimestampHeader = "X-GeoDrive-Timestamp";
    public const string NonceHeader = "X-GeoDrive-Nonce";
    public const string SignatureHeader = "X-GeoDrive-Signature";
    public const string Route = "/v1/peer/notices";

    public static string Sign(byte[] key, string timestamp, string nonce, ReadOnlySpan<byte> body)
    {
        using var hmac = IncrementalHash.CreateHMAC(HashAlgorithmName.SHA256, key);
        hmac.AppendData(Encoding.UTF8.GetBytes($"geodrive-peer-v1\n{timestamp}\n{nonce}\n"));
        hmac.AppendData(body);
        return Convert.ToHexStringLower(hmac.GetHashAndReset());
    }

    /// <summary>Constant time, so a forger learns nothing from how long a refusal took.</summary>
    public static bool Verify(byte[] key, string timestamp, string nonce, ReadOnlySpan<byte> body, string signature)
    {
        var expected = Encoding.ASCII.GetBytes(Sign(key, timestamp, nonce, body));
        var given = Encoding.ASCII.GetBytes(signature.Trim().ToLowerInvariant());
        return CryptographicOperations.FixedTimeEquals(expected, given);
    }

    public static string NewNonce() => Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));

    public static string Timestamp(DateTimeOffset utc) => utc.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture);

    public static byte[] KeyBytes(string peerKey) => Encoding.UTF8.GetBytes(peerKey);
}
