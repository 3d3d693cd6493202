using System.Buffers;
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
/// <para>
/// The application's write does not wait for the hashing while the machine has room for it: a write of
/// <see cref="InlineBelow"/> bytes or more is copied and hashed on the thread pool, in order, while the application goes
/// on (a 128 KiB write through the mount took a third longer when it was hashed at once). The copies of every file being
/// written share <see cref="SharedBudget"/> bytes: beyond it a write is hashed at once, as when many files are written
/// together and the cores are busy anyway (copies then cost CPU and memory and bought nothing). A file whose bytes are
/// being hashed keeps its order: a write of it that cannot be copied (the shared budget spent) waits until it can, or
/// until the file's copies are hashed and it can be hashed at once.
/// <see cref="Finish"/> waits for the last of them.
/// </para>
/// </summary>
internal sealed class SequentialDigest : IDisposable
{
    /// <summary>Smaller writes are hashed at once (when nothing waits to be hashed): a copy would cost about as much.</summary>
    public const int InlineBelow = 16 << 10;

    /// <summary>Bytes of all files copied and not hashed yet: beyond, a write is hashed at once (after its file's copies).</summary>
    public const long SharedBudget = 16L << 20;

    private static long s_shared;

    private readonly object _gate = new();
    private readonly IncrementalHash _sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private readonly XxHash128 _xxh = new();
    private readonly Queue<(byte[] Bytes, int Length)> _pending = new();
    // A pool thread is hashing what is pending; only it appends to the hashes meanwhile.
    private bool _hashing;
    private bool _ended;
    private bool _disposed;
    private long _length;

    /// <summary>Bytes taken so far; -1 once ended.</summary>
    public long Length
    {
        get
        {
            lock (_gate)
            {
                return _ended ? -1 : _length;
            }
        }
    }

    /// <summary><paramref name="bytes"/> were written at <paramref name="offset"/>.</summary>
    public void Written(long offset, ReadOnlySpan<byte> bytes)
    {
        lock (_gate)
        {
            // Behind bytes still waiting to be hashed, this write waits too (in order) unless it can be copied now, within
            // the shared budget (which also bounds each file's). Waited for before the write is placed, so that no other
            // writer let in meanwhile gets ahead of it.
            var copied = false;
            while (!_ended && _hashing && !(copied = Reserve(bytes.Length)))
            {
                Monitor.Wait(_gate);
            }
            if (_ended || offset != _length)
            {
                if (copied)
                {
                    Interlocked.Add(ref s_shared, -bytes.Length);
                }
                EndLocked();
                return;
            }
            _length += bytes.Length;
            if (!copied && (bytes.Length < InlineBelow || !Reserve(bytes.Length)))
            {
                // Nothing of this file waits (or it would have been copied above): hashed here, in order.
                _sha.AppendData(bytes);
                _xxh.Append(bytes);
                return;
            }
            var copy = ArrayPool<byte>.Shared.Rent(bytes.Length);
            bytes.CopyTo(copy);
            _pending.Enqueue((copy, bytes.Length));
            if (!_hashing)
            {
                _hashing = true;
                ThreadPool.UnsafeQueueUserWorkItem(static digest => digest.HashPending(), this, preferLocal: false);
            }
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

    /// <summary>The checksums of every byte taken (once the last is hashed), or null once ended; ends it either way.</summary>
    public WrittenDigest? Finish()
    {
        lock (_gate)
        {
            while (_hashing && !_ended)
            {
                Monitor.Wait(_gate);
            }
            if (_ended)
            {
                return null;
            }
            var digest = new WrittenDigest(_length, Convert.ToHexStringLower(_sha.GetHashAndReset()), Convert.ToHexStringLower(_xxh.GetCurrentHash()));
            EndLocked();
            return digest;
        }
    }

    public void Dispose() => End();

    /// <summary>Takes <paramref name="length"/> bytes of the shared budget, if it has them.</summary>
    private static bool Reserve(int length)
    {
        if (Interlocked.Add(ref s_shared, length) <= SharedBudget)
        {
            return true;
        }
        Interlocked.Add(ref s_shared, -length);
        return false;
    }

    /// <summary>On a pool thread: hashes what is pending, in order, until nothing is.</summary>
    private void HashPending()
    {
        while (true)
        {
            (byte[] Bytes, int Length) next;
            lock (_gate)
            {
                if (_ended || !_pending.TryDequeue(out next))
                {
                    _hashing = false;
                    DropPendingLocked();
                    Monitor.PulseAll(_gate);
                    return;
                }
            }
            _sha.AppendData(next.Bytes, 0, next.Length);
            _xxh.Append(next.Bytes.AsSpan(0, next.Length));
            ArrayPool<byte>.Shared.Return(next.Bytes);
            Interlocked.Add(ref s_shared, -next.Length);
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
    }

    private void EndLocked()
    {
        _ended = true;
        Monitor.PulseAll(_gate);
        if (!_hashing)
        {
            DropPendingLocked();
        }
    }

    /// <summary>Gives back what was never hashed, and the hash itself once nothing can append to it any more.</summary>
    private void DropPendingLocked()
    {
        while (_pending.TryDequeue(out var dropped))
        {
            ArrayPool<byte>.Shared.Return(dropped.Bytes);
            Interlocked.Add(ref s_shared, -dropped.Length);
        }
        if (_ended && !_disposed)
        {
            _disposed = true;
            _sha.Dispose();
        }
    }
}
