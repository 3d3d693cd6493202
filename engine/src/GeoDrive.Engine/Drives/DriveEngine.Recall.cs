using System.Buffers;
using System.Collections.Concurrent;
using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Files;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Recall: a stub's bytes come back into its cache file in place. Above multipart.threshold the file
/// is fetched as ranged GETs of partSize, multipart.restoreThreads at a time, each written at its
/// offset (the stub is already sparse at full size), so memory stays at one copy buffer per range in
/// flight. A hasher follows the bytes present from the start of the file; only when every byte is
/// there and the checksum matches does the file become Cached, else it is made a clean stub again.
/// A recall is a <see cref="RecallSession"/> that readers can await range by range (streaming recall).
/// </summary>
public sealed partial class DriveEngine
{
    // A range that fails is fetched again from where its bytes stopped, this many times in all.
    private const int RangeAttempts = 5;
    private const int HashBufferSize = 1 << 20;

    private readonly ConcurrentDictionary<string, RecallSession> _recalls = new(StringComparer.Ordinal);
    private readonly CancellationTokenSource _recallsStopping = new();
    private SemaphoreSlim? _restoreSlots;

    // transfer.restoreThreads: whole-file recalls asked for by Invoke-CloudRecall, recall jobs and the API
    // at once. Read when the drive starts, as the other transfer settings.
    private SemaphoreSlim RestoreSlots => _restoreSlots ??= new SemaphoreSlim(Math.Max(1, _policy.Policy.RestoreThreads.Value));

    private long RecallRangeSize => _policy.Policy.PartSize.Value;

    // Uploads and recalls alike: files above the threshold (never below one part) move in parts.
    private long MultipartThreshold => Math.Max(_policy.Policy.MultipartThreshold.Value, _policy.Policy.PartSize.Value);

    /// <summary>Brings a stub's data back from the bucket, verified against the recorded checksum.</summary>
    public async Task<FileEntry> RecallAsync(string path, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        await RestoreSlots.WaitAsync(cancellationToken);
        try
        {
            using (await _locks.AcquireAsync(path, cancellationToken))
            {
                var entry = _index.Get(path) ?? throw NotFound(path);
                return await RecallLockedAsync(entry, cancellationToken);
            }
        }
        finally
        {
            RestoreSlots.Release();
        }
    }

    /// <summary>Bytes of a recalling file already in its cache file, or null when it is not recalling.</summary>
    public (long Present, long Size)? RecallProgress(string path) =>
        _recalls.TryGetValue(DrivePath.Normalize(path), out var session) ? (session.BytesPresent, session.Size) : null;

    /// <summary>
    /// Waits until [offset, offset+length) of a file opened while recalling is in its cache file. Returns at
    /// once when the file is not recalling; fails when its recall failed (the file is a stub again).
    /// </summary>
    public ValueTask WaitForRangeAsync(string path, long offset, long length, CancellationToken cancellationToken = default)
    {
        if (_recalls.TryGetValue(path, out var session))
        {
            return session.WaitForRangeAsync(offset, length, cancellationToken);
        }
        return _index.Get(path) is { State: FileState.Stubbed or FileState.Recalling } stub
            ? ValueTask.FromException(RecallFailed(stub))
            : ValueTask.CompletedTask;
    }

    /// <summary>Stops every recall in flight (the drive is going away); their files stay stubs.</summary>
    public async Task StopRecallsAsync()
    {
        await _recallsStopping.CancelAsync();
        await Task.WhenAll(_recalls.Values.Select(s => s.Runner));
    }

    /// <summary>Recall with the path's lock already held: joins a recall in flight or starts one, and waits for its outcome.</summary>
    private async Task<FileEntry> RecallLockedAsync(FileEntry entry, CancellationToken cancellationToken)
    {
        var started = false;
        if (!_recalls.TryGetValue(entry.Path, out var session))
        {
            if (entry.State != FileState.Stubbed)
            {
                return entry;
            }
            RefuseWithoutRoom(entry);
            session = StartRecallLocked(entry, cancellationToken);
            started = true;
        }
        try
        {
            await session.Data.WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException) when (started && !session.Data.IsCompleted)
        {
            // Cancelled with its starter: once the workers have stopped, the stub is put back before this answers.
            await session.Data.ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default);
        }
        catch (Exception) when (session.Data.IsCompleted)
        {
            // The outcome (a failure) is recorded below, with the lock this caller holds.
        }
        return FinishRecallLocked(session);
    }

    /// <summary>
    /// A recall that would leave the cache volume less than <see cref="CacheReserve.Bytes"/> is refused at once
    /// (CacheVolumeFull, ENOSPC through the mount), before a byte is fetched: the index must keep room to record
    /// the stubs that free space, which threshold stubbing does at the next tick.
    /// </summary>
    private void RefuseWithoutRoom(FileEntry stub)
    {
        if (new FolderVolume(Options.CachePath).Measure().AvailableBytes - stub.Size >= CacheReserve.Bytes)
        {
            return;
        }
        var full = CacheVolume.Full(stub.Path, stub.Size, null);
        Record(DriveEventKind.Error, stub.Path, full.Message, full.ErrorId);
        throw full;
    }

    /// <summary>
    /// Starts the recall of a stub (path lock held) and returns at once: the entry is Recalling, the
    /// workers run in the background and finish under the path's lock unless a waiter holding it does.
    /// </summary>
    private RecallSession StartRecallLocked(FileEntry entry, CancellationToken cancellationToken = default)
    {
        var key = entry.ObjectKey ?? KeyFor(entry.Path);
        var rangeSize = entry.Size > MultipartThreshold ? RecallRangeSize : Math.Max(1, entry.Size);
        var session = new RecallSession(entry, key, rangeSize, _recallsStopping.Token);
        // A caller that started the recall and gives up cancels it; readers who joined only stop waiting.
        var registration = cancellationToken.CanBeCanceled ? cancellationToken.Register(session.Cancellation.Cancel) : default;
        _life.Apply(entry, FileChange.RecallStarted);
        _recalls[entry.Path] = session;
        Transfers.RecallStarted(entry.Size);
        session.Runner = Task.Run(async () =>
        {
            await using (registration)
            {
                await FetchAsync(session);
            }
            using (await AcquireRecallPathAsync(session))
            {
                try
                {
                    FinishRecallLocked(session);
                }
                catch (Exception)
                {
                    // Recorded in the index and the events; readers saw it through the session.
                }
            }
            session.Ended();
        }, CancellationToken.None);
        return session;
    }

    /// <summary>The lock of the recalling file's path as it is once held: a rename may move the file while this waits.</summary>
    private async Task<IDisposable> AcquireRecallPathAsync(RecallSession session)
    {
        while (true)
        {
            var path = session.Path;
            var held = await _locks.AcquireAsync(path);
            if (path == session.Path)
            {
                return held;
            }
            held.Dispose();
        }
    }

    /// <summary>Fetches every range and hashes the file; completes or fails <see cref="RecallSession.Data"/>, never throws.</summary>
    private async Task FetchAsync(RecallSession session)
    {
        var token = session.Cancellation.Token;
        try
        {
            using var file = BeneathCache.OpenHandle(Options.CachePath, LocalPath(session.Path), FileMode.Open, FileAccess.ReadWrite);
            var threads = session.RangeCount == 1 ? 1 : Math.Min(session.RangeCount, Math.Max(1, _policy.Policy.MultipartRestoreThreads.Value));
            var workers = new List<Task>(threads + 1) { HashAsync(session, file, token) };
            for (var i = 0; i < threads; i++)
            {
                workers.Add(FetchRangesAsync(session, file, token));
            }
            await Task.WhenAll(workers);
            session.Complete();
        }
        catch (Exception ex)
        {
            session.Fail(session.Failure ?? ex);
        }
    }

    private async Task FetchRangesAsync(RecallSession session, SafeFileHandle file, CancellationToken cancellationToken)
    {
        try
        {
            while (session.TryTake(out var range))
            {
                await FetchRangeAsync(session, range, file, cancellationToken);
            }
        }
        catch (Exception ex)
        {
            session.Fail(ex);
            throw;
        }
    }

    /// <summary>One range, retried from where its bytes stopped (possibly on another endpoint) with backoff and jitter.</summary>
    private async Task FetchRangeAsync(RecallSession session, int range, SafeFileHandle file, CancellationToken cancellationToken)
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
            Stream destination = new RangeWriteStream(file, session, range, start + present, length - present);
            if (DownloadThrottled)
            {
                destination = new ThrottledStream(destination, DownloadThrottle);
            }
            try
            {
                // The last range is asked open-ended, so an object longer than recorded is noticed (its extra bytes are refused).
                await _store.GetAsync(session.Key, destination, start + present, last ? null : length - present, session.Version, cancellationToken);
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
                _logger.LogInformation("{Drive}: range {Range} of '{Path}' failed ({Message}); again in {Delay} ms from byte {Offset}",
                    Name, range, session.Path, ex.Message, (int)delay.TotalMilliseconds, start + session.PresentOf(range));
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
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        // A stub made from an object GeoDrive did not write has no recorded SHA-256: its ETag (MD5) is checked instead.
        using var md5 = session.ExpectedChecksum is null ? IncrementalHash.CreateHash(HashAlgorithmName.MD5) : null;
        // Pooled: a new 1 MiB array per recall was zeroed each time (5 % of the service's CPU recalling 1 MB files).
        var buffer = ArrayPool<byte>.Shared.Rent((int)Math.Min(HashBufferSize, Math.Max(1, session.Size)));
        try
        {
            await HashIntoAsync(session, file, sha, md5, buffer, cancellationToken);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
        session.Sha256 = sha.GetHashAndReset();
        session.Md5 = md5?.GetHashAndReset();
    }

    private static async Task HashIntoAsync(RecallSession session, SafeFileHandle file, IncrementalHash sha, IncrementalHash? md5, byte[] buffer, CancellationToken cancellationToken)
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
            sha.AppendData(buffer, 0, read);
            md5?.AppendData(buffer, 0, read);
            hashed += read;
        }
    }

    /// <summary>
    /// Records a recall's outcome, with the path's lock held (once; later calls give the same outcome):
    /// Cached (or Dirty for a renamed stub) when every byte is there and verified, else a clean stub again.
    /// </summary>
    private FileEntry FinishRecallLocked(RecallSession session)
    {
        if (session.Finished)
        {
            return session.Outcome.Task.GetAwaiter().GetResult();
        }
        session.Finished = true;
        var path = session.Path;
        var key = session.Key;
        var localPath = LocalPath(path);
        var entry = _index.Get(path);
        try
        {
            Transfers.RecallEnded(session.Size);
            if (session.Failure is { } failure)
            {
                throw failure;
            }
            if (entry is null || entry.State != FileState.Recalling)
            {
                // Deleted, renamed away or replaced meanwhile: nothing of ours to record.
                throw NotFound(path);
            }
            var sha256 = Convert.ToHexStringLower(session.Sha256!);
            if (entry.Checksum is null ? !ForeignObjectMatches(entry, session.Md5!) : sha256 != entry.Checksum)
            {
                throw Mismatch(path, key);
            }
            entry.Checksum ??= sha256;
            // On disk before the index says Cached and the mark goes: a power cut must not leave a "Cached" file of zeros.
            using (var handle = BeneathCache.OpenHandle(Options.CachePath, localPath, FileMode.Open, FileAccess.ReadWrite))
            using (var written = new FileStream(handle, FileAccess.ReadWrite, bufferSize: 0))
            {
                File.SetLastWriteTimeUtc(handle, entry.ModifiedUtc.UtcDateTime);
                written.Flush(flushToDisk: true);
            }
            StubMark.Clear(localPath);
        }
        catch (Exception ex)
        {
            try
            {
                if (entry is { State: FileState.Recalling })
                {
                    RecallFailedLocked(entry, key, ex);
                }
            }
            finally
            {
                // Whatever putting the stub back met, the outcome is set: later callers (the recall's own worker,
                // holding the file's lock) wait for it.
                session.Fail(ex);
                _recalls.TryRemove(new KeyValuePair<string, RecallSession>(path, session));
                session.Outcome.TrySetException(ex);
            }
            throw;
        }

        Transfers.Recalled(entry.Size);
        entry.LastAccessUtc = _clock.UtcNow;
        entry.LastError = null;
        if (key == KeyFor(path))
        {
            _life.Apply(entry, FileChange.Recalled);
        }
        else
        {
            // A stub renamed while its bytes stayed under the old key: now that the data is local it
            // goes up under its new name, and the old key is removed once that upload is verified.
            _renamed.Release(key, path);
            entry.DirtySinceUtc = _clock.UtcNow;
            _life.Apply(entry, FileChange.RecalledForNewName);
        }
        _accessWaits.NeededFor(entry);
        _recalls.TryRemove(new KeyValuePair<string, RecallSession>(path, session));
        Record(DriveEventKind.Recall, path, $"Recalled {ByteSize.Format(entry.Size)} from '{key}'{(session.RangeCount > 1 ? $" in {session.RangeCount} ranges" : "")}.");
        session.Outcome.TrySetResult(entry);
        return entry;
    }

    /// <summary>
    /// A recall that failed: the file is a clean stub again (partial bytes are never taken for its data). A cache
    /// file deleted meanwhile is not made again; its delete, waiting for the lock, forgets the entry.
    /// </summary>
    private void RecallFailedLocked(FileEntry entry, string key, Exception ex)
    {
        var localPath = LocalPath(entry.Path);
        if (File.Exists(localPath) && !ThroughLink(entry.Path))
        {
            try
            {
                LocalFile.MakeStub(Options.CachePath, localPath, entry.Size, entry.ModifiedUtc, MarkFor(entry, key));
            }
            catch (FileNotFoundException)
            {
                // Deleted between the look and the open: as above.
            }
        }
        entry.LastError = ex is OperationCanceledException ? entry.LastError : ex.Message;
        _life.Apply(entry, FileChange.RecallFailed);
        if (ex is not OperationCanceledException)
        {
            Record(DriveEventKind.Error, entry.Path, $"Recall failed: {ex.Message}", (ex as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
        }
    }

    /// <summary>Recalls in flight follow a rename of their file (or of a folder above it); a delete stops them.</summary>
    private void MoveRecalls(string oldPath, string? newPath)
    {
        foreach (var (path, session) in _recalls.ToArray())
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
            if (_recalls.TryRemove(new KeyValuePair<string, RecallSession>(path, session)))
            {
                session.Path = moved;
                _recalls[moved] = session;
            }
        }
    }

    private static GeoDriveException RecallFailed(FileEntry stub) => new(
        ErrorIds.StoreError, ErrorKind.ResourceUnavailable,
        $"The recall of '{stub.Path}' did not complete{(stub.LastError is { } why ? $": {why}" : "")}; the file stays a stub.",
        "Open the file again to retry; Get-CloudFile shows the last error.");

    private static GeoDriveException Mismatch(string path, string key) => new(
        ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
        $"The object '{key}' does not hold the bytes recorded for '{path}' (size or checksum differ); the file stays a stub.",
        "Someone changed or replaced the object in the bucket; restore the right version (bucket versioning) and open the file again.");

    /// <summary>Writes one range's bytes at their offsets in the cache file and tells the session as they land.</summary>
    private sealed class RangeWriteStream(SafeFileHandle file, RecallSession session, int range, long position, long remaining) : Stream
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
