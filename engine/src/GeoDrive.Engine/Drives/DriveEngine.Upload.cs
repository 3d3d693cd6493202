using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    /// <summary>
    /// Uploads one file now (Invoke-ForceUpload, sync mode, the scheduler) and verifies the object.
    /// Returns the entry as it ends: Cached when the bucket holds exactly the current bytes, Dirty when
    /// the file changed during the transfer (it will go again), Excluded when a policy excludes it.
    /// </summary>
    public async Task<FileEntry> UploadAsync(string path, CancellationToken cancellationToken = default)
    {
        path = Core.Paths.DrivePath.Normalize(path);
        var localPath = LocalPath(path);
        LocalFile local;
        long generation;

        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path) ?? throw NotFound(path);
            if (entry.State is FileState.Cached or FileState.Stubbed or FileState.Recalling)
            {
                return entry;
            }
            if (_policy.IsExcluded(path, isDirectory: false))
            {
                entry.State = FileState.Excluded;
                _index.Put(entry);
                return entry;
            }
            if (LocalFile.Read(localPath) is not { } found)
            {
                _index.Delete(path);
                throw NotFound(path);
            }
            local = found;
            entry.State = FileState.Uploading;
            _index.Put(entry);
            generation = entry.Generation;
        }

        var key = KeyFor(path);
        try
        {
            await RescueDisplacedStubAsync(key, path, cancellationToken);
            // Checksums first: they travel as user metadata in the PUT's headers.
            var hashes = await FileHashes.ComputeAsync(localPath, cancellationToken);
            ObjectInfo? head = null;
            if (hashes.Length == local.Size)
            {
                var metadata = ObjectLayout.MetadataFor(hashes.Sha256, local.Size, local.ModifiedUtc, local.Mode);
                ObjectLayout.AddTags(metadata, _policy.TagsFor(path), path, local.ModifiedUtc);
                ObjectInfo put;
                Transfers.UploadStarted(local.Size);
                try
                {
                    await using var file = FileHashes.OpenShared(localPath);
                    // Unthrottled, a file goes as is (multipart parts straight from their offsets).
                    await using Stream content = UploadThrottled ? new ThrottledStream(file, UploadThrottle) : file;
                    put = await _store.PutAsync(key, content, local.Size, metadata, cancellationToken);
                }
                finally
                {
                    Transfers.UploadEnded(local.Size);
                }
                // A single PUT answers with the MD5 the server computed over the bytes it stored:
                // checked against ours, that is verification enough. Otherwise (multipart, or a server
                // that answers without it) HEAD, which is also what any later reader will see.
                head = ObjectLayout.IsPlainMd5(put.ETag) ? put : await _store.HeadAsync(key, cancellationToken);
            }
            return await FinishUploadAsync(path, key, generation, local, hashes, head, cancellationToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            await FailUploadAsync(path, ex, CancellationToken.None);
            throw;
        }
        catch (OperationCanceledException)
        {
            await FailUploadAsync(path, null, CancellationToken.None);
            throw;
        }
    }

    private async Task<FileEntry> FinishUploadAsync(string path, string key, long generation, LocalFile local, FileHashes hashes, ObjectInfo? head, CancellationToken cancellationToken)
    {
        string? replacedKey = null;
        FileEntry result;
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path);
            if (entry is null)
            {
                // Deleted while uploading: the object must not outlive the file.
                _pendingDeletes.Enqueue(key);
                throw NotFound(path);
            }
            var now = LocalFile.Read(LocalPath(path));
            if (entry.Generation != generation || now != local || hashes.Length != local.Size)
            {
                // Changed under the transfer: the object holds old bytes; upload again after settle.
                entry.State = FileState.Dirty;
                entry.DirtySinceUtc ??= _clock.UtcNow;
                _index.Put(entry);
                return entry;
            }
            if (head is null || !ObjectLayout.Holds(head, local.Size, hashes.Sha256, hashes.Md5))
            {
                throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                    $"After uploading '{path}' the bucket does not hold its bytes (size or checksum differ).",
                    "The file stays Dirty and is uploaded again; if this repeats, check the S3 server's health.");
            }
            if (entry.ObjectKey is { } previous && previous != key)
            {
                replacedKey = previous;
            }
            entry.State = FileState.Cached;
            entry.Size = local.Size;
            entry.ModifiedUtc = local.ModifiedUtc;
            entry.Checksum = hashes.Sha256;
            entry.ObjectKey = key;
            entry.ETag = head.ETag;
            entry.VersionId = head.VersionId;
            entry.DirtySinceUtc = null;
            entry.FailedAttempts = 0;
            entry.NextAttemptUtc = null;
            entry.LastError = null;
            _index.Put(entry);
            result = entry;
        }
        if (replacedKey is not null)
        {
            // A renamed file's bytes now live under its new key; the old one goes.
            _pendingDeletes.Enqueue(replacedKey);
        }
        Transfers.Uploaded(local.Size);
        Record(DriveEventKind.Upload, path, $"Uploaded {ByteSize.Format(local.Size)} to '{key}'.");
        return result;
    }

    private async Task FailUploadAsync(string path, Exception? error, CancellationToken cancellationToken)
    {
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path);
            if (entry is null || entry.State != FileState.Uploading)
            {
                return;
            }
            entry.State = FileState.Dirty;
            entry.DirtySinceUtc ??= _clock.UtcNow;
            if (error is not null)
            {
                entry.FailedAttempts++;
                var delay = TimeSpan.FromSeconds(Math.Min(Options.MaxRetryDelay.TotalSeconds, Math.Pow(2, Math.Min(entry.FailedAttempts, 20))));
                entry.NextAttemptUtc = _clock.UtcNow + delay;
                entry.LastError = error.Message;
            }
            _index.Put(entry);
        }
        if (error is not null)
        {
            Record(DriveEventKind.Error, path, $"Upload failed, will retry: {error.Message}", (error as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
        }
    }

    private async Task<(int Uploaded, int Failed)> UploadDueAsync(CancellationToken cancellationToken)
    {
        if (UploadsSuspended)
        {
            return (0, 0);
        }
        var now = _clock.UtcNow;
        var settle = _policy.Settle;
        var due = _index.FindByState(FileState.Dirty, Options.TickBatchSize)
            .Where(e => !_open.ContainsKey(e.Path)
                        && (e.DirtySinceUtc is null || e.DirtySinceUtc.Value + settle <= now)
                        && (e.NextAttemptUtc is null || e.NextAttemptUtc.Value <= now))
            .Select(e => e.Path)
            .ToList();
        if (due.Count == 0)
        {
            return (0, 0);
        }

        var uploaded = 0;
        var failed = 0;
        await Parallel.ForEachAsync(due, new ParallelOptions { MaxDegreeOfParallelism = Options.UploadConcurrency, CancellationToken = cancellationToken }, async (path, ct) =>
        {
            try
            {
                var entry = await UploadAsync(path, ct);
                if (entry.State == FileState.Cached)
                {
                    Interlocked.Increment(ref uploaded);
                }
            }
            catch (GeoDriveException)
            {
                Interlocked.Increment(ref failed);
            }
            catch (IOException)
            {
                Interlocked.Increment(ref failed);
            }
        });
        return (uploaded, failed);
    }
}
