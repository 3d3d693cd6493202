using System.Buffers;
using System.Collections.Concurrent;
using System.IO.Hashing;
using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The recalls in flight and their bytes (docs/architecture.md, "Reads are pinned"): each is a
/// <see cref="RecallSession"/> whose ranges are fetched as ranged GETs pinned to the recorded version, a few at
/// a time, each written at its offset in the stub's cache file (already sparse at full size). A file of one range is
/// hashed as its bytes are written, in order; for several, a hasher follows the bytes present from the start of the
/// file, reading them back. The hash is XXH3-128 where the file's entry records one, else SHA-256
/// (docs/decisions/0027-recall-checked-by-xxh128.md). A range that fails is fetched again from where its
/// bytes stopped. The file's state is not the recaller's: once a session's bytes are in (or failed), it hands
/// the session to the engine's <c>finish</c>, which records the outcome under the file's lock.
/// </summary>
/// <param name="restoreThreads">multipart.restoreThreads: ranges of one file fetched at once.</param>
/// <param name="throttled">The download throttle in force for a destination, or the destination itself.</param>
internal sealed class Recaller(string drive, string cachePath, IObjectStore store, Func<int> restoreThreads, Func<Stream, Stream> throttled, ILogger logger)
{
    // A range that fails is fetched again from where its bytes stopped, this many times in all.
    private const int RangeAttempts = 5;
    private const int HashBufferSize = 1 << 20;

    private readonly ConcurrentDictionary<string, RecallSession> _sessions = new(StringComparer.Ordinal);
    private readonly CancellationTokenSource _stopping = new();

    /// <summary>The recall in flight of a path, if any.</summary>
    public bool TryGet(string path, out RecallSession session) => _sessions.TryGetValue(path, out session!);

    public bool IsRecalling(string path) => _sessions.ContainsKey(path);

    /// <summary>
    /// Starts fetching a stub's bytes (the caller holds its path's lock and has recorded it Recalling) and returns
    /// at once. <paramref name="cancellationToken"/> is the starter's: giving up cancels the recall; readers who
    /// joined only stop waiting. When the bytes are in or failed, <paramref name="finish"/> records the outcome.
    /// With <paramref name="mark"/>, the stub is marked Recalling by it before the first byte goes in.
    /// </summary>
    public RecallSession Start(FileEntry entry, string key, long rangeSize, Func<RecallSession, Task> finish, CancellationToken cancellationToken,
        StubMark? mark = null)
    {
        var session = new RecallSession(entry, key, rangeSize, _stopping.Token) { Mark = mark };
        var registration = cancellationToken.CanBeCanceled ? cancellationToken.Register(session.Cancellation.Cancel) : default;
        _sessions[entry.Path] = session;
        session.Runner = Task.Run(async () =>
        {
            try
            {
                await using (registration)
                {
                    await FetchAsync(session);
                }
                await finish(session);
            }
            finally
            {
                session.File?.Dispose();
            }
            session.Ended();
        }, CancellationToken.None);
        return session;
    }

    /// <summary>The session's outcome is recorded: the path has no recall in flight any more.</summary>
    public void Ended(RecallSession session) => _sessions.TryRemove(new KeyValuePair<string, RecallSession>(session.Path, session));

    /// <summary>Recalls in flight follow a rename of their file (or of a folder above it); a delete (null) stops them.</summary>
    public void Move(string oldPath, string? newPath)
    {
        foreach (var (path, session) in _sessions.ToArray())
        {
            if (path != oldPath && !path.StartsWith(oldPath + "/", StringComparison.Ordinal))
            {
                continue;
            }
            if (newPath is null)
            {
                session.Cancellation.Cancel();
                continue;
            }
            var moved = newPath + path[oldPath.Length..];
            if (_sessions.TryRemove(new KeyValuePair<string, RecallSession>(path, session)))
            {
                session.Path = moved;
                _sessions[moved] = session;
            }
        }
    }

    /// <summary>Stops every recall in flight (the drive is going away) and waits until each has been finished.</summary>
    public async Task StopAsync()
    {
        await _stopping.CancelAsync();
        await Task.WhenAll(_sessions.Values.Select(s => s.Runner));
    }

    public static GeoDriveException Mismatch(string path, string key) => new(
        ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
        $"The object '{key}' does not hold the bytes recorded for '{path}' (size or checksum differ); the file stays a stub.",
        "Someone changed or replaced the object in the bucket; restore the right version (bucket versioning) and open the file again.");

    /// <summary>Fetches every range and hashes the file; completes or fails <see cref="RecallSession.Data"/>, never throws.</summary>
    private async Task FetchAsync(RecallSession session)
    {
        var token = session.Cancellation.Token;
        try
        {
            // Kept open: the outcome is recorded through it, and Start closes it after that.
            var localPath = DrivePath.ToLocal(cachePath, session.Path);
            var file = session.File = BeneathCache.OpenHandle(cachePath, localPath, FileMode.Open, FileAccess.ReadWrite);
            session.StubTime = FileProperties.ReadTime(file);
            if (session.Mark is { } mark)
            {
                // Before a byte goes in: a restart takes whatever the file then holds for the object's, not for bytes written into a stub.
                StubMark.Write(file, localPath, mark with { Recalling = true });
            }
            var threads = session.RangeCount == 1 ? 1 : Math.Min(session.RangeCount, Math.Max(1, restoreThreads()));
            // One range arrives in order, and a retry goes on from where its bytes stopped: hashed as written, it is
            // not read back (a second copy of every byte, and a follower woken per write).
            using var inOrder = session.RangeCount == 1 ? new RecallHash(session) : null;
            var workers = new List<Task>(threads + 1);
            if (inOrder is null)
            {
                workers.Add(HashAsync(session, file, token));
            }
            for (var i = 0; i < threads; i++)
            {
                workers.Add(FetchRangesAsync(session, file, inOrder, token));
            }
            await Task.WhenAll(workers);
            inOrder?.Finish(session);
            session.Complete();
        }
        catch (Exception ex)
        {
            session.Fail(session.Failure ?? ex);
        }
    }

    private async Task FetchRangesAsync(RecallSession session, SafeFileHandle file, RecallHash? inOrder, CancellationToken cancellationToken)
    {
        try
        {
            while (session.TryTake(out var range))
            {
                await FetchRangeAsync(session, range, file, inOrder, cancellationToken);
            }
        }
        catch (Exception ex)
        {
            session.Fail(ex);
            throw;
        }
    }

    /// <summary>One range, retried from where its bytes stopped (possibly on another endpoint) with backoff and jitter.</summary>
    private async Task FetchRangeAsync(RecallSession session, int range, SafeFileHandle file, RecallHash? inOrder, CancellationToken cancellationToken)
    {
        var (start, length) = session.RangeOf(range);
        var last = range == session.RangeCount - 1;
        for (var attempt = 1; ; attempt++)
        {
            var present = session.PresentOf(range);
            if (present >= length && attempt > 1)
            {
                return;
            }
            var destination = throttled(new RangeWriteStream(file, session, range, start + present, length - present, inOrder));
            try
            {
                // The last range is asked open-ended, so an object longer than recorded is noticed (its extra bytes are refused).
                var answer = await store.GetAsync(session.Key, destination, start + present, last ? null : length - present, session.Version, cancellationToken);
                session.Answer ??= answer;
                if (session.PresentOf(range) != length)
                {
                    throw Mismatch(session.Path, session.Key);
                }
                return;
            }
            catch (IOException ex) when (CacheReserve.IsVolumeFull(ex))
            {
                // Not tried again: nothing frees space within a retry's wait. The application gets ENOSPC at once, and
                // threshold stubbing (at the next tick) makes room for its next try.
                throw CacheVolume.Full(session.Path, session.Size, ex);
            }
            catch (Exception ex) when (attempt < RangeAttempts && IsTransient(ex) && !cancellationToken.IsCancellationRequested)
            {
                var delay = TimeSpan.FromMilliseconds(Random.Shared.Next(0, 100 << Math.Min(attempt, 6)));
                logger.LogInformation("{Drive}: range {Range} of '{Path}' failed ({Message}); again in {Delay} ms from byte {Offset}",
                    drive, range, session.Path, ex.Message, (int)delay.TotalMilliseconds, start + session.PresentOf(range));
                await Task.Delay(delay, cancellationToken);
            }
        }
    }

    private static bool IsTransient(Exception ex) => ex switch
    {
        GeoDriveException g => g.ErrorId is ErrorIds.EndpointUnreachable or ErrorIds.StoreError,
        OperationCanceledException => false,
        _ => ex is IOException or HttpRequestException or TimeoutException,
    };

    /// <summary>Follows the bytes present from the start of the file, hashing them in order as they arrive.</summary>
    private static async Task HashAsync(RecallSession session, SafeFileHandle file, CancellationToken cancellationToken)
    {
        using var hash = new RecallHash(session);
        // Pooled: a new 1 MiB array per recall was zeroed each time (5 % of the service's CPU recalling 1 MB files).
        var buffer = ArrayPool<byte>.Shared.Rent((int)Math.Min(HashBufferSize, Math.Max(1, session.Size)));
        try
        {
            await HashIntoAsync(session, file, hash, buffer, cancellationToken);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
        hash.Finish(session);
    }

    private static async Task HashIntoAsync(RecallSession session, SafeFileHandle file, RecallHash hash, byte[] buffer, CancellationToken cancellationToken)
    {
        long hashed = 0;
        while (hashed < session.Size)
        {
            var end = session.ContiguousEnd();
            if (end <= hashed)
            {
                await session.WaitForProgressAsync(cancellationToken);
                continue;
            }
            var count = (int)Math.Min(buffer.Length, end - hashed);
            var read = await RandomAccess.ReadAsync(file, buffer.AsMemory(0, count), hashed, cancellationToken);
            if (read <= 0)
            {
                throw new IOException($"The cache file of '{session.Path}' ended at {hashed} bytes while recalling.");
            }
            hash.Append(buffer.AsSpan(0, read));
            hashed += read;
        }
    }

    /// <summary>
    /// The hashes a recall checks its bytes by, appended in file order: XXH3-128 alone where the entry records one
    /// (SHA-256 costs this machine's CPU more than ten times as much, and was a third of the service's CPU in a cold
    /// read of 10 MB files), else SHA-256, with MD5 for a stub of an object GeoDrive did not write (its ETag is checked).
    /// </summary>
    private sealed class RecallHash : IDisposable
    {
        private readonly XxHash128? _xxh;
        private readonly IncrementalHash? _sha;
        private readonly IncrementalHash? _md5;

        public RecallHash(RecallSession session)
        {
            if (session.ExpectedXxh128 is not null)
            {
                _xxh = new XxHash128();
                return;
            }
            _sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            _md5 = session.ExpectedChecksum is null ? IncrementalHash.CreateHash(HashAlgorithmName.MD5) : null;
        }

        public void Append(ReadOnlySpan<byte> bytes)
        {
            _xxh?.Append(bytes);
            _sha?.AppendData(bytes);
            _md5?.AppendData(bytes);
        }

        public void Finish(RecallSession session)
        {
            session.Xxh128 = _xxh?.GetCurrentHash();
            session.Sha256 = _sha?.GetHashAndReset();
            session.Md5 = _md5?.GetHashAndReset();
        }

        public void Dispose()
        {
            _sha?.Dispose();
            _md5?.Dispose();
        }
    }

    /// <summary>
    /// Writes one range's bytes at their offsets in the cache file and tells the session as they land; hashes them
    /// once written when the file is one range (<paramref name="inOrder"/>).
    /// </summary>
    private sealed class RangeWriteStream(SafeFileHandle file, RecallSession session, int range, long position, long remaining, RecallHash? inOrder) : Stream
    {
        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => position; set => throw new NotSupportedException(); }

        public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if (buffer.Length > remaining)
            {
                // More bytes than the recorded size: the object is not the one the stub stands for.
                throw Mismatch(session.Path, session.Key);
            }
            await RandomAccess.WriteAsync(file, buffer, position, cancellationToken);
            // Only bytes written: a write that failed is fetched again from here, and hashed then.
            inOrder?.Append(buffer.Span);
            position += buffer.Length;
            remaining -= buffer.Length;
            session.Advance(range, buffer.Length);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush()
        {
        }

        public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
