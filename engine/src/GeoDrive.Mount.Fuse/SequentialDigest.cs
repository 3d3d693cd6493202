using System.IO.Hashing;
using System.Security.Cryptography;
using GeoDrive.Core.Model;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// The SHA-256 and XXH3-128 of a file kept as it is written through the mount, from empty: a write at the file's end
/// extends them, anything else (a write before or past the end, a truncation to another length) ends them for good, and
/// the upload then reads the file to hash it as before. Shared by the handles of one path (<see cref="OpenPath"/>), so
/// writes are taken in the order they are hashed, not the order they reach the disk: two that overlap can only end it
/// (docs/decisions/0032-hashed-as-written.md).
/// </summary>
internal sealed class SequentialDigest : IDisposable
{
    private readonly Lock _gate = new();
    private IncrementalHash? _sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private readonly XxHash128 _xxh = new();
    private long _length;

    /// <summary>Bytes taken so far; -1 once ended.</summary>
    public long Length
    {
        get
        {
            lock (_gate)
            {
                return _sha is null ? -1 : _length;
            }
        }
    }

    /// <summary><paramref name="bytes"/> were written at <paramref name="offset"/>.</summary>
    public void Written(long offset, ReadOnlySpan<byte> bytes)
    {
        lock (_gate)
        {
            if (_sha is null)
            {
                return;
            }
            if (offset != _length)
            {
                EndLocked();
                return;
            }
            _sha.AppendData(bytes);
            _xxh.Append(bytes);
            _length += bytes.Length;
        }
    }

    /// <summary>The file was cut or extended to <paramref name="size"/>: only its own length keeps the digest.</summary>
    public void Truncated(long size)
    {
        lock (_gate)
        {
            if (size != _length)
            {
                EndLocked();
            }
        }
    }

    /// <summary>Something this cannot follow happened to the file (a write that failed half way, a truncation by another handle).</summary>
    public void End()
    {
        lock (_gate)
        {
            EndLocked();
        }
    }

    /// <summary>The checksums of every byte taken, or null once ended; ends it either way.</summary>
    public WrittenDigest? Finish()
    {
        lock (_gate)
        {
            if (_sha is null)
            {
                return null;
            }
            var digest = new WrittenDigest(_length, Convert.ToHexStringLower(_sha.GetHashAndReset()), Convert.ToHexStringLower(_xxh.GetCurrentHash()));
            EndLocked();
            return digest;
        }
    }

    public void Dispose() => End();

    private void EndLocked()
    {
        _sha?.Dispose();
        _sha = null;
    }
}
