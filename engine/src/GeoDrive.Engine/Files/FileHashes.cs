using System.Buffers;
using System.IO.Hashing;
using System.Security.Cryptography;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>
/// SHA-256 (what we record), XXH3-128 (what a recall, the check before a stub and recovery compare) and MD5 (what a
/// single-part ETag is) of a file in one pass. The MD5 is left out (null) where no ETag will be compared with it: a
/// multipart object's ETag is not an MD5 of its bytes, and a server that checks signed bodies proves a single PUT
/// itself. MD5 costs more than SHA-256 here (660 vs 1,570 MB/s on this machine's CPU, SHA-NI); XXH3-128 a small part
/// of either.
/// </summary>
public readonly record struct FileHashes(string Sha256, string? Md5, long Length, string Xxh128)
{
    private const int BufferSize = 1 << 20;

    public static async Task<FileHashes> ComputeAsync(string cacheRoot, string localPath, bool withMd5 = true, CancellationToken cancellationToken = default)
    {
        await using var stream = OpenShared(cacheRoot, localPath);
        return await ComputeAsync(stream, withMd5, cancellationToken);
    }

    public static async Task<FileHashes> ComputeAsync(Stream stream, bool withMd5 = true, CancellationToken cancellationToken = default)
    {
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        using var md5 = withMd5 ? IncrementalHash.CreateHash(HashAlgorithmName.MD5) : null;
        var xxh = new XxHash128();
        var total = await AppendAsync(stream, sha, md5, xxh, cancellationToken);
        return new FileHashes(Convert.ToHexStringLower(sha.GetHashAndReset()), md5 is null ? null : Convert.ToHexStringLower(md5.GetHashAndReset()), total,
            Convert.ToHexStringLower(xxh.GetCurrentHash()));
    }

    /// <summary>
    /// Whether a cache file still holds the bytes its entry records (the check before a stub), and their MD5 when asked:
    /// by the XXH3-128 the entry records beside its SHA-256, else by the SHA-256 (docs/decisions/0027-recall-checked-by-xxh128.md).
    /// </summary>
    public static async Task<(bool Same, string? Md5)> CheckAsync(string cacheRoot, string localPath, FileEntry entry, bool withMd5, CancellationToken cancellationToken = default)
    {
        await using var stream = OpenShared(cacheRoot, localPath);
        return await CheckAsync(stream, entry, withMd5, cancellationToken);
    }

    /// <summary>As above, over a stream read from where it stands to its end.</summary>
    public static async Task<(bool Same, string? Md5)> CheckAsync(Stream stream, FileEntry entry, bool withMd5, CancellationToken cancellationToken = default)
    {
        var xxh = entry.Xxh128 is null ? null : new XxHash128();
        using var sha = xxh is null ? IncrementalHash.CreateHash(HashAlgorithmName.SHA256) : null;
        using var md5 = withMd5 ? IncrementalHash.CreateHash(HashAlgorithmName.MD5) : null;
        var total = await AppendAsync(stream, sha, md5, xxh, cancellationToken);
        var same = total == entry.Size && (xxh is not null
            ? Convert.ToHexStringLower(xxh.GetCurrentHash()) == entry.Xxh128
            : Convert.ToHexStringLower(sha!.GetHashAndReset()) == entry.Checksum);
        return (same, md5 is null ? null : Convert.ToHexStringLower(md5.GetHashAndReset()));
    }

    /// <summary>Reads a stream to its end into each hash given; returns its length.</summary>
    private static async Task<long> AppendAsync(Stream stream, IncrementalHash? sha, IncrementalHash? md5, XxHash128? xxh, CancellationToken cancellationToken)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        try
        {
            long total = 0;
            int read;
            while ((read = await stream.ReadAsync(buffer, cancellationToken)) > 0)
            {
                sha?.AppendData(buffer, 0, read);
                md5?.AppendData(buffer, 0, read);
                xxh?.Append(buffer.AsSpan(0, read));
                total += read;
            }
            return total;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>
    /// Reads a file that goes up in one PUT whole into <paramref name="buffer"/> (one byte longer than the
    /// size expected, so a file that grew shows as a length mismatch) and hashes it there: one read serves
    /// hash and upload (the store would buffer it for signing anyway). MD5 only <paramref name="withMd5"/>.
    /// </summary>
    public static async Task<FileHashes> ReadWholeAsync(SafeFileHandle file, byte[] buffer, bool withMd5 = true, CancellationToken cancellationToken = default)
    {
        var total = await ReadIntoAsync(file, buffer, cancellationToken);
        var bytes = buffer.AsSpan(0, total);
        return new FileHashes(Convert.ToHexStringLower(SHA256.HashData(bytes)), withMd5 ? Convert.ToHexStringLower(MD5.HashData(bytes)) : null, total,
            Convert.ToHexStringLower(XxHash128.Hash(bytes)));
    }

    /// <summary>
    /// As above, for a file whose checksums were taken as it was written (<paramref name="written"/>): read, not hashed.
    /// The length is what was read, so a file that grew or shrank since still shows as a mismatch.
    /// </summary>
    public static async Task<FileHashes> ReadWholeAsync(SafeFileHandle file, byte[] buffer, WrittenDigest written, CancellationToken cancellationToken = default)
    {
        var total = await ReadIntoAsync(file, buffer, cancellationToken);
        return new FileHashes(written.Sha256, null, total, written.Xxh128);
    }

    /// <summary>
    /// Reads an open cache file (<see cref="OpenRead"/>) from its start into <paramref name="buffer"/> until it is full or
    /// the file ends; returns the bytes read.
    /// </summary>
    private static async Task<int> ReadIntoAsync(SafeFileHandle file, byte[] buffer, CancellationToken cancellationToken)
    {
        var total = 0;
        int read;
        while (total < buffer.Length && (read = await RandomAccess.ReadAsync(file, buffer.AsMemory(total), total, cancellationToken)) > 0)
        {
            total += read;
        }
        return total;
    }

    /// <summary>A cache file opened for reading, beneath the cache and through no link, for <see cref="ReadWholeAsync(SafeFileHandle, byte[], bool, CancellationToken)"/>.</summary>
    public static SafeFileHandle OpenRead(string cacheRoot, string localPath) =>
        BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Read);

    /// <summary>
    /// Opens a cache file for reading while others may keep writing (the engine never blocks an application),
    /// beneath the cache and through no link (<see cref="BeneathCache"/>).
    /// </summary>
    public static FileStream OpenShared(string cacheRoot, string localPath) =>
        new(OpenRead(cacheRoot, localPath), FileAccess.Read, bufferSize: 0);
}
