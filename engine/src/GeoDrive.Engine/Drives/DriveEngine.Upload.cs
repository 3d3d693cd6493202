using System.Buffers;
using System.Diagnostics;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    // Files that go up in one PUT are read once, into one pooled buffer that is hashed and sent (the
    // store buffers a single PUT whole anyway, to sign it); larger ones are hashed, then streamed in parts.
    private long SinglePutBytes => Math.Min(Array.MaxLength - 1, MultipartThreshold);

    private readonly PathLocks _uploadLocks = new();

    /// <summary>Where the store finds out, once, whether its server refuses a PUT for a free key when the key is taken.</summary>
    private string WriteProbeKey => Options.Prefix + DriveEngineOptions.InternalFolder + "/write-probe";

    /// <summary>
    /// Uploads one file now (Invoke-ForceUpload, sync mode, the scheduler) and verifies the object.
    /// Returns the entry as it ends: Cached when the bucket holds exactly the current bytes, Dirty when
    /// the file changed during the transfer (it will go again), Excluded when a policy excludes it.
    /// </summary>
    public async Task<FileEntry> UploadAsync(string path, CancellationToken cancellationToken = default)
    {
        path = Core.Paths.DrivePath.Normalize(path);
        // One upload of a path at a time (pipeline, sync close, Invoke-ForceUpload): two PUTs of one key
        // racing could leave the older bytes in the bucket after the newer upload was verified.
        using (await _uploadLocks.AcquireAsync(path, cancellationToken))
        {
            return await UploadOnceAsync(path, cancellationToken);
        }
    }

    private async Task<FileEntry> UploadOnceAsync(string path, CancellationToken cancellationToken)
    {
        var localPath = DataPath(path);
        var key = KeyFor(path);
        LocalFile local;
        long generation;
        string? knownETag;
        bool neverUploaded;
        WrittenDigest? written;

        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path) ?? throw NotFound(path);
            if (entry.State is FileState.Cached or FileState.Stubbed or FileState.Recalling)
            {
                return entry;
            }
            if (_policy.IsExcluded(path, isDirectory: false))
            {
                if (entry.ObjectKey is { } previous && previous != KeyFor(path))
                {
                    // Renamed to a name kept local: the object it had under its old name goes.
                    _owedChanges.OweDeletes([previous]);
                    entry.ObjectKey = null;
                }
                _life.Apply(entry, FileChange.Excluded);
                return entry;
            }
            if (LocalFile.Read(localPath) is not { } found)
            {
                // Renamed or deleted under us: the mount's rename or delete, arriving next, moves or drops the entry.
                throw NotFound(path);
            }
            if (StubMark.Read(localPath) is { } mark)
            {
                if (mark.IsPlaceholder(found))
                {
                    // A stub's zeros, never data (a truncating open that failed, a lost index): it stays a stub.
                    entry.Size = mark.Size;
                    entry.ModifiedUtc = mark.ModifiedUtc;
                    entry.ObjectKey = mark.Key ?? entry.ObjectKey ?? key;
                    entry.DirtySinceUtc = null;
                    _life.Apply(entry, FileChange.PlaceholderFound);
                    Record(DriveEventKind.Error, path, "The file still holds a stub's placeholder, not data: it was not uploaded and stays a stub.", ErrorIds.StubNotData);
                    return entry;
                }
                // Truncated or written since: real bytes, and the mark is stale.
                StubMark.Clear(localPath);
            }
            local = found;
            // Not waited for: after a crash Uploading and Dirty mean the same (upload again), and a
            // durable wait per upload blocked a pool thread each (see LiteDbFileIndex's group commit).
            _life.Apply(entry, FileChange.UploadStarted, deferred: true);
            generation = entry.Generation;
            // Checksums the front end took as the file was written, when they are of this change and this file.
            written = _written.For(path, generation, local);
            // The version of the key this file last knew (uploaded, recalled or synced), or, for a file renamed onto
            // the name, the version the file it replaced there knew (kept in its entry), or the one the file renamed away from it knew (its bytes are safe: rescued below, or copied):
            // another one there now is a conflict.
            // A version a conflict put under the name unseen is none it knew (ADR 0043): an overwrite meets it as a conflict.
            knownETag = entry.ObjectKey == key ? entry.SeenETag : entry.ReplacesETag ?? _renamed.LeftVersion(key);
            neverUploaded = entry.ObjectKey is null;
        }
        var started = Stopwatch.GetTimestamp();

        try
        {
            await RescueDisplacedStubAsync(key, path, cancellationToken);
            byte[]? whole = null;
            try
            {
                // Checksums first: they travel as user metadata in the PUT's headers. A file for one PUT
                // is read once, into a pooled buffer that is hashed and sent, its PUT signed with that SHA-256;
                // its MD5 is only computed for a server that does not check signed bodies, where the ETag the
                // PUT answers with is the proof the server stored what was sent. On a server that checks them,
                // checksums taken as the file was written are used as they are: the server refuses a body they
                // are not of. A multipart file is streamed in parts, so memory never holds it whole, without MD5
                // (its ETag is not one); hashed by a pass before, unless its checksums were taken as it was
                // written (docs/decisions/0032-hashed-as-written.md).
                FileHashes hashes;
                FileProperties? properties = null;
                if (local.Size <= SinglePutBytes)
                {
                    whole = ArrayPool<byte>.Shared.Rent((int)Math.Max(1, local.Size + 1));
                    var withMd5 = !await _store.VerifiesPayloadChecksumsAsync(WriteProbeKey, cancellationToken);
                    // One open serves the bytes and, on Linux, the properties that travel with them (owner, exact time, ACL, attributes).
                    using var file = FileHashes.OpenRead(Options.CachePath, localPath);
                    hashes = withMd5 || written is null
                        ? await FileHashes.ReadWholeAsync(file, whole, withMd5, cancellationToken)
                        : await FileHashes.ReadWholeAsync(file, whole, written, cancellationToken);
                    properties = OperatingSystem.IsLinux() ? FileProperties.Read(file) : null;
                }
                else
                {
                    hashes = written is not null
                        ? new FileHashes(written.Sha256, null, written.Length, written.Xxh128)
                        : await FileHashes.ComputeAsync(Options.CachePath, localPath, withMd5: false, cancellationToken);
                }
                ObjectInfo? head = null;
                for (var attempt = 1; hashes.Length == local.Size; attempt++)
                {
                    PutCondition condition;
                    if (attempt == 1 && whole is not null && await PutIsItsOwnComparisonAsync(knownETag, neverUploaded, cancellationToken))
                    {
                        // One request, not two (issue 13): the PUT names what it may replace, the version this file knew or
                        // a free key, and the server refuses it over anything else (another site's write); the comparison
                        // then runs, as for any other file (docs/decisions/0014-conditional-uploads.md).
                        condition = string.IsNullOrEmpty(knownETag) ? PutCondition.Absent : PutCondition.Matching(knownETag);
                    }
                    else
                    {
                        // Compared first, then PUT: only the server's refusal of a write over another version closes the moment between.
                        await _unguarded.CheckAsync(cancellationToken);
                        var compared = await CompareWithBucketAsync(path, key, knownETag, hashes.Sha256, generation, cancellationToken);
                        // The bucket answered: whatever this upload ends in, files that waited only for it go now.
                        _uploads.EndpointAnswered();
                        if (compared.Kept is { } kept)
                        {
                            return kept;
                        }
                        if (compared.Deferred)
                        {
                            // Both changed, but the file cannot be moved aside now: nothing goes up over the other version.
                            await FailUploadAsync(path, null, CancellationToken.None);
                            return _index.Get(path) ?? throw NotFound(path);
                        }
                        // Only over the version just compared with: one another site writes meanwhile fails the PUT.
                        condition = PutCondition.Replacing(compared.Current);
                    }
                    try
                    {
                        head = await PutComparedAsync(path, key, localPath, local, hashes, whole, properties, generation, condition, cancellationToken);
                        break;
                    }
                    catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch && attempt < 3)
                    {
                        // Written after the comparison, or since the version this file knew: compare (both changed: both are kept).
                    }
                }
                return await FinishUploadAsync(path, key, generation, local, hashes, head, started, cancellationToken);
            }
            finally
            {
                if (whole is not null)
                {
                    ArrayPool<byte>.Shared.Return(whole);
                }
            }
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.SourceChanged)
        {
            // Changed under the transfer, which was aborted: Dirty again, no failure counted.
            await FailUploadAsync(path, null, CancellationToken.None);
            return _index.Get(path) ?? throw NotFound(path);
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

    /// <summary>
    /// Whether a file's PUT can be its own comparison with the bucket: it names the version this file last knew (If-Match),
    /// or, for a file never uploaded that knew none, a free key (If-None-Match: *), and the store found that its server
    /// refuses such a PUT over anything else. Otherwise the comparison's HEAD goes first.
    /// </summary>
    private async Task<bool> PutIsItsOwnComparisonAsync(string? knownETag, bool neverUploaded, CancellationToken cancellationToken) =>
        string.IsNullOrEmpty(knownETag) ? neverUploaded && await _store.RefusesPutsOverTakenKeysAsync(WriteProbeKey, cancellationToken)
        : await _store.RefusesPutsOverOtherVersionsAsync(WriteProbeKey, cancellationToken);

    /// <summary>Sends the file's bytes under <paramref name="condition"/>; returns the object as the PUT's answer or a HEAD shows it.</summary>
    /// <param name="properties">The file's properties read with its bytes (<paramref name="whole"/>), or null to read them here.</param>
    private async Task<ObjectInfo?> PutComparedAsync(string path, string key, string localPath, LocalFile local, FileHashes hashes, byte[]? whole, FileProperties? properties, long generation, PutCondition condition, CancellationToken cancellationToken)
    {
        var metadata = ObjectLayout.MetadataFor(hashes.Sha256, hashes.Xxh128, local.Size, local.ModifiedUtc, local.Mode);
        metadata[ObjectLayout.SiteKey] = SiteId;
        if (Options.CaseInsensitive)
        {
            ObjectLayout.AddName(metadata, path);
        }
        ObjectLayout.AddTags(metadata, _policy.TagsFor(path), path, local.ModifiedUtc);
        ObjectLayout.AddObjectTags(metadata, _policy.ObjectTagsFor(path), path, local.ModifiedUtc);
        AddProperties(metadata, path, properties ?? FileProperties.Read(Options.CachePath, localPath));
        ObjectInfo put;
        Transfers.UploadStarted(local.Size);
        try
        {
            // A file goes as is, multipart parts straight from their offsets; throttled, each part is paced as it is sent.
            await using Stream file = whole is not null
                ? new MemoryStream(whole, 0, (int)local.Size, writable: false, publiclyVisible: true)
                : FileHashes.OpenShared(Options.CachePath, localPath);
            await using Stream content = UploadThrottled ? new ThrottledStream(file, UploadThrottle) : file;
            // A multipart upload's id is journaled before its first part (aborted after a crash), and it is
            // aborted rather than completed when the file changed while its parts went up.
            var multipart = new JournaledMultipart(_owedChanges, key,
                () => _index.Get(path) is { } now && now.Generation == generation && LocalFile.Read(localPath) == local);
            // A body from memory is exactly the bytes hashed: the PUT is signed with their SHA-256, not hashed again.
            put = await _store.PutAsync(key, content, local.Size, metadata, multipart, condition, whole is not null ? hashes.Sha256 : null, cancellationToken);
        }
        finally
        {
            Transfers.UploadEnded(local.Size);
        }
        // A single PUT answers with the MD5 the server computed over the bytes it stored: checked against
        // ours (when the server does not check signed bodies itself), that is verification enough. Otherwise
        // (multipart, or a server that answers without it) HEAD, which is also what any later reader will see.
        return ObjectLayout.IsPlainMd5(put.ETag) ? put : await _store.HeadAsync(key, cancellationToken);
    }

    /// <summary>The file's properties (owner, exact time, ACL, attributes) as its object's metadata; what does not fit is named in an event.</summary>
    private void AddProperties(Dictionary<string, string> metadata, string path, FileProperties? properties)
    {
        if (properties is not null && PropertyMetadata.Add(metadata, properties) is { Count: > 0 } left)
        {
            Record(DriveEventKind.Error, path,
                $"Not kept in the bucket, over S3's {PropertyMetadata.Limit} bytes of metadata: {string.Join(", ", left)}. This copy keeps them; a new host would not.",
                ErrorIds.PropertiesTrimmed);
        }
    }

    private async Task<FileEntry> FinishUploadAsync(string path, string key, long generation, LocalFile local, FileHashes hashes, ObjectInfo? head, long started, CancellationToken cancellationToken)
    {
        FileEntry result;
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path);
            if (entry is null)
            {
                // Deleted (or renamed away) while uploading: the object must not outlive the file.
                _owedChanges.OweDeletes([key]);
                throw NotFound(path);
            }
            var now = LocalFile.Read(LocalPath(path));
            if (entry.Generation != generation || now != local || hashes.Length != local.Size)
            {
                // Changed under the transfer: the object holds old bytes; upload again after settle. (A write
                // the engine heard of already moved the entry on; one it has not heard of yet is seen here.)
                var known = head is not null && entry.ObjectKey is null;
                if (known)
                {
                    // Its first PUT went through with the older bytes: that version is this file's now, so the next
                    // try replaces it (If-Match) instead of asking for a free key, which the server would refuse.
                    entry.ObjectKey = key;
                    entry.ETag = head!.ETag;
                    entry.VersionId = head.VersionId;
                }
                if (entry.State == FileState.Uploading)
                {
                    entry.DirtySinceUtc ??= _clock.UtcNow;
                    _life.Apply(entry, FileChange.UploadAbandoned);
                }
                else if (known)
                {
                    _life.Save(entry);
                }
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
                // A renamed file's bytes now live under its new key; the old one goes, journaled before the
                // entry forgets it (a crash in between deletes an old copy, never the only one).
                _owedChanges.OweDeletes([previous]);
            }
            _renamed.VersionGone(key);
            entry.ReplacesETag = null;
            entry.Size = local.Size;
            entry.ModifiedUtc = local.ModifiedUtc;
            entry.Checksum = hashes.Sha256;
            entry.Xxh128 = hashes.Xxh128;
            entry.ObjectKey = key;
            entry.ETag = head.ETag;
            entry.VersionId = head.VersionId;
            entry.DirtySinceUtc = null;
            entry.FailedAttempts = 0;
            entry.NextAttemptUtc = null;
            entry.LastError = null;
            _written.Forget(path);
            // Deferred too: it is on disk before anything acts on it, as stubbing writes durably first
            // (a group commit takes every earlier write); lost in a crash, the file is uploaded again.
            // Taken on the generation the upload read (checked above, under this lock).
            _life.Apply(entry, FileChange.UploadVerified, deferred: true, decidedOn: generation);
            // The bucket was just asked (the PUT's answer or a HEAD): an open within updateWait need not ask again.
            _sync.Checked(path);
            _accessWaits.NeededFor(entry);
            // Under the path's lock, so the Upload event always comes before a Stub event of the same file.
            Record(DriveEventKind.Upload, path, $"Uploaded {ByteSize.Format(local.Size)} to '{key}'.");
            result = entry;
        }
        Transfers.Uploaded(local.Size);
        Metrics.UploadTook(Stopwatch.GetElapsedTime(started));
        ChangeMade(new BucketChangeMade(BucketChangeMadeKind.Put, key));
        _uploads.WentThrough(path);
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
            entry.DirtySinceUtc ??= _clock.UtcNow;
            // The next try hashes the file by reading it: a server that refused a body for its checksum refuses it again.
            _written.Forget(path);
            if (error is not null)
            {
                entry.FailedAttempts++;
                var delay = TimeSpan.FromSeconds(Math.Min(Options.MaxRetryDelay.TotalSeconds, Math.Pow(2, Math.Min(entry.FailedAttempts, 20))));
                entry.NextAttemptUtc = _clock.UtcNow + delay;
                entry.LastError = error.Message;
            }
            _uploads.Failed(path, unreachable: error is GeoDriveException { ErrorId: ErrorIds.EndpointUnreachable });
            _life.Apply(entry, FileChange.UploadAbandoned);
        }
        if (error is GeoDriveException { ErrorId: ErrorIds.StoreError or ErrorIds.ObjectMismatch or ErrorIds.AccessDenied or ErrorIds.CredentialsRejected or ErrorIds.BucketNotFound })
        {
            // The server answered, if only to refuse: files that waited only for the endpoint go now (a file never
            // uploaded asks nothing before its PUT, so its PUT's answer may be the only one).
            _uploads.EndpointAnswered();
        }
        if (error is not null)
        {
            Record(DriveEventKind.Error, path, $"Upload failed, will retry: {error.Message}", (error as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
        }
    }
}
