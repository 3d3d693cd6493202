using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Recall, as a file's life sees it: a stub becomes Recalling under its lock, the <see cref="Recaller"/> brings
/// its bytes back into its cache file in place (ranged GETs of partSize above multipart.threshold), and only
/// when every byte is there and the checksum matches, fsynced, does the file become Cached; else it is made a
/// clean stub again. A recall is a <see cref="RecallSession"/> that readers can await range by range
/// (streaming recall).
/// </summary>
public sealed partial class DriveEngine
{
    // transfer.restoreThreads: whole-file recalls asked for by Invoke-CloudRecall, recall jobs and the API
    // at once, as the policy in force says (a saved policy changes it for the next recall).
    private ConcurrencyLimit RestoreSlots => _restoreSlots ??= new ConcurrencyLimit(() => _policy.Policy.RestoreThreads.Value);
    private ConcurrencyLimit? _restoreSlots;

    private long RecallRangeSize => _policy.Policy.PartSize.Value;

    // Uploads and recalls alike: files above the threshold (never below one part) move in parts.
    private long MultipartThreshold => Math.Max(_policy.Policy.MultipartThreshold.Value, _policy.Policy.PartSize.Value);

    /// <summary>Brings a stub's data back from the bucket, verified against the recorded checksum.</summary>
    public async Task<FileEntry> RecallAsync(string path, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        using (await RestoreSlots.EnterAsync(cancellationToken))
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path) ?? throw NotFound(path);
            return await RecallLockedAsync(entry, cancellationToken);
        }
    }

    /// <summary>Bytes of a recalling file already in its cache file, or null when it is not recalling.</summary>
    public (long Present, long Size)? RecallProgress(string path) =>
        Recalls.TryGet(DrivePath.Normalize(path), out var session) ? (session.BytesPresent, session.Size) : null;

    /// <summary>
    /// Waits until [offset, offset+length) of a file opened while recalling is in its cache file. Returns at
    /// once when the file is not recalling; fails when its recall failed (the file is a stub again).
    /// </summary>
    public ValueTask WaitForRangeAsync(string path, long offset, long length, CancellationToken cancellationToken = default)
    {
        if (Recalls.TryGet(path, out var session))
        {
            return session.WaitForRangeAsync(offset, length, cancellationToken);
        }
        return _index.Get(path) is { State: FileState.Stubbed or FileState.Recalling } stub
            ? ValueTask.FromException(RecallFailed(stub))
            : ValueTask.CompletedTask;
    }

    /// <summary>Stops every recall in flight (the drive is going away); their files stay stubs.</summary>
    public Task StopRecallsAsync() => Recalls.StopAsync();

    /// <summary>Recall with the path's lock already held: joins a recall in flight or starts one, and waits for its outcome.</summary>
    private async Task<FileEntry> RecallLockedAsync(FileEntry entry, CancellationToken cancellationToken) =>
        (await RecallAnsweredLockedAsync(entry, asCheck: false, cancellationToken)).Entry;

    /// <summary>
    /// As <see cref="RecallLockedAsync"/>, with the version that answered its GETs (null when nothing was fetched). A recall
    /// started <paramref name="asCheck"/> is the open's check of the bucket as well: a version replaced or deleted there
    /// leaves the stub as it was, without an error event, for the open to ask about and follow.
    /// </summary>
    private async Task<(FileEntry Entry, ObjectInfo? Answer)> RecallAnsweredLockedAsync(FileEntry entry, bool asCheck, CancellationToken cancellationToken)
    {
        var started = false;
        if (!Recalls.TryGet(entry.Path, out var session))
        {
            if (entry.State != FileState.Stubbed)
            {
                return (entry, null);
            }
            RefuseWithoutRoom(entry);
            session = StartRecallLocked(entry, cancellationToken);
            session.AsCheck = asCheck;
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
        return (FinishRecallLocked(session), session.Answer);
    }

    /// <summary>
    /// A recall that would leave the cache volume less than <see cref="CacheReserve.Bytes"/> is refused at once
    /// (CacheVolumeFull, ENOSPC through the mount), before a byte is fetched: the index must keep room to record
    /// the stubs that free space, which threshold stubbing does at the next tick.
    /// </summary>
    private void RefuseWithoutRoom(FileEntry stub)
    {
        if (new FolderVolume(Options.CachePath).AvailableBytes() - stub.Size >= CacheReserve.Bytes)
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
        // Not waited for on disk where the stub's own mark says Recalling before a byte goes in, which is what a restart
        // needs (docs/decisions/0028-recall-recorded-by-its-mark.md); on Windows the index alone says it.
        _life.Apply(entry, FileChange.RecallStarted, deferred: StubMark.Supported);
        Transfers.RecallStarted(entry.Size);
        return Recalls.Start(entry, key, rangeSize, FinishRecallAsync, cancellationToken, MarkFor(entry, key));
    }

    /// <summary>A recall's bytes are in or failed: its outcome is recorded under the file's lock (unless a waiter holding it did).</summary>
    private async Task FinishRecallAsync(RecallSession session)
    {
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
            if (!HoldsRecordedBytes(entry, session))
            {
                throw Recaller.Mismatch(path, key);
            }
            if (entry.Checksum is null && session.Sha256 is { } sha256)
            {
                entry.Checksum = Convert.ToHexStringLower(sha256);
            }
            // Through the handle the bytes went in by (every byte is in, so the fetch opened it): a rename on disk the index
            // has not heard of yet moved the file, not its bytes.
            var handle = session.File!;
            FileProperties.SetTime(handle, FileTime.Exact(entry.ModifiedUtc, session.StubTime), path);
            if (!ObjectLayout.IsOwnKey(Options.Prefix, key, path, Options.CaseInsensitive) || !StubMark.Supported)
            {
                // On disk before the index says Cached (or Dirty) and the mark goes: a power cut must not leave such a file of zeros.
                RandomAccess.FlushToDisk(handle);
                StubMark.Clear(handle);
            }
        }
        catch (Exception ex)
        {
            try
            {
                if (entry is { State: FileState.Recalling })
                {
                    var finding = session.AsCheck && ex is GeoDriveException { ErrorId: ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound };
                    RecallFailedLocked(entry, key, ex, session.File, quiet: finding);
                }
            }
            finally
            {
                // Whatever putting the stub back met, the outcome is set: later callers (the recall's own worker,
                // holding the file's lock) wait for it.
                session.Fail(ex);
                Recalls.Ended(session);
                session.Outcome.TrySetException(ex);
            }
            throw;
        }

        Transfers.Recalled(entry.Size);
        Metrics.RecallTook(System.Diagnostics.Stopwatch.GetElapsedTime(session.Started));
        entry.LastAccessUtc = _clock.UtcNow;
        entry.LastError = null;
        if (ObjectLayout.IsOwnKey(Options.Prefix, key, path, Options.CaseInsensitive))
        {
            // Not waited for on disk (where stubs carry marks), and neither are its bytes: the file keeps its Recalling mark
            // until the background has flushed them, and anything that would change it settles that first. A restart that
            // finds the mark checks the bytes against the recorded hash (CacheRecovery;
            // docs/decisions/0031-recall-flushed-after-its-answer.md). On Windows they were flushed above.
            _life.Apply(entry, FileChange.Recalled, deferred: StubMark.Supported);
            if (StubMark.Supported)
            {
                FlushLater(path, session);
            }
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
        Recalls.Ended(session);
        Record(DriveEventKind.Recall, path, $"Recalled {ByteSize.Format(entry.Size)} from '{key}'{(session.RangeCount > 1 ? $" in {session.RangeCount} ranges" : "")}.");
        session.Outcome.TrySetResult(entry);
        return entry;
    }

    /// <summary>Hands the recall's handle to the background flush (the file's lock held): the recall's answer stands whatever the flush meets.</summary>
    private void FlushLater(string path, RecallSession session)
    {
        var handle = session.File!;
        session.File = null;
        _recallFlushes.Add(path, handle);
    }

    private void RecallFlushFailed(string? path, Exception ex) => Record(DriveEventKind.Error, path,
        $"Recalled bytes could not be flushed to the cache volume ({ex.Message}); the file keeps its recall mark, and a restart checks its bytes against the recorded checksum.",
        ErrorIds.CacheWriteFailed);

    /// <summary>
    /// Whether a recall fetched the bytes its entry records: by XXH3-128 where it records one (beside the SHA-256 it had when
    /// the recall started), else by SHA-256, else (an object GeoDrive did not write) by its ETag where that is an MD5.
    /// </summary>
    private static bool HoldsRecordedBytes(FileEntry entry, RecallSession session)
    {
        if (session.Xxh128 is { } xxh128)
        {
            return entry.Checksum == session.ExpectedChecksum && entry.Xxh128 == Convert.ToHexStringLower(xxh128);
        }
        if (entry.Checksum is null)
        {
            return session.Md5 is { } md5 && ObjectLayout.ForeignObjectMatches(entry, md5);
        }
        return session.Sha256 is { } sha256 && Convert.ToHexStringLower(sha256) == entry.Checksum;
    }

    /// <summary>
    /// A recall that failed: the file is a clean stub again (partial bytes are never taken for its data), through the
    /// handle the recall opened, else by name. A cache file deleted before the recall opened it is not made again; its
    /// delete, waiting for the lock, forgets the entry. <paramref name="quiet"/>: a finding of the open's check, which the
    /// open follows (a sync event says what changed), so no error event.
    /// </summary>
    private void RecallFailedLocked(FileEntry entry, string key, Exception ex, SafeFileHandle? file, bool quiet = false)
    {
        var localPath = LocalPath(entry.Path);
        if (file is not null)
        {
            // The file the recall wrote into, wherever a rename on disk took it: a stub again, never marked partial bytes.
            LocalFile.MakeStub(file, localPath, entry.Size, entry.ModifiedUtc, MarkFor(entry, key));
        }
        else if (File.Exists(localPath) && !ThroughLink(entry.Path))
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
        entry.LastError = ex is OperationCanceledException || quiet ? entry.LastError : ex.Message;
        _life.Apply(entry, FileChange.RecallFailed);
        if (ex is not OperationCanceledException && !quiet)
        {
            Record(DriveEventKind.Error, entry.Path, $"Recall failed: {ex.Message}", (ex as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
        }
    }

    private static GeoDriveException RecallFailed(FileEntry stub) => new(
        ErrorIds.StoreError, ErrorKind.ResourceUnavailable,
        $"The recall of '{stub.Path}' did not complete{(stub.LastError is { } why ? $": {why}" : "")}; the file stays a stub.",
        "Open the file again to retry; Get-CloudFile shows the last error.");
}
