using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Policies.Model;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Engine.Drives;

/// <summary>The front-end contract (docs/architecture.md, "The front-end contract"): what FUSE and ProjFS ask the engine.</summary>
public sealed partial class DriveEngine : IDriveFileSystem
{
    public string CachePath => Options.CachePath;

    public bool IsInternalPath(string path) => DriveEngineOptions.IsInternal(path);

    public bool NamesIgnoreCase => Options.CaseInsensitive;

    public bool ClosesUpload => _policy.Mode == UploadMode.Sync;

    /// <summary>
    /// Sync-CloudDrive: the whole tree under <paramref name="path"/> (the drive's root when empty) synced with the bucket now,
    /// folder by folder, making every stub and folder the bucket has, whatever updateWait says; told after each folder.
    /// </summary>
    public async Task<TreeSync> SyncTreeAsync(string path, Action<TreeSync>? progress = null, CancellationToken cancellationToken = default)
    {
        var synced = await _sync.SyncTreeAsync(path, progress, cancellationToken);
        Record(DriveEventKind.Sync, DrivePath.Normalize(path) is { Length: > 0 } folder ? folder : null,
            $"Sync-CloudDrive: {synced.Folders} folder(s) listed; {synced.StubsMade} stub(s) and {synced.FoldersMade} folder(s) made.");
        return synced;
    }

    /// <summary>
    /// A peer (a site sharing the bucket) told of changes it made under <paramref name="keys"/>: their folders are synced
    /// with the bucket now and clean files under those keys ask it again (<see cref="BucketSync.FollowToldChangesAsync"/>).
    /// </summary>
    public async Task<PeerChangesFollowed> FollowPeerChangesAsync(IReadOnlyCollection<string> keys, CancellationToken cancellationToken = default)
    {
        var followed = await _sync.FollowToldChangesAsync(keys, cancellationToken);
        if (_policy.PeerChanges == PeerChangeAction.Recall)
        {
            // upload.peerChanges: recall: the told files' bytes come now, within the drive's recall limit, not at their first open.
            var stubs = keys.Where(k => k.StartsWith(Options.Prefix, StringComparison.Ordinal)).Select(PathOfKey).OfType<string>()
                .Where(p => _index.Get(p) is { State: FileState.Stubbed } entry && entry.ObjectKey == KeyFor(p)).Distinct().ToList();
            await Parallel.ForEachAsync(stubs, new ParallelOptions { MaxDegreeOfParallelism = 4, CancellationToken = cancellationToken }, async (path, ct) =>
            {
                try
                {
                    await RecallAsync(path, ct);
                }
                catch (Exception ex) when (ex is GeoDriveException or IOException)
                {
                    // Left a stub: recalled at its first open instead.
                    _logger.LogInformation("{Drive}: '{Path}', told of by a peer, was not recalled at once: {Message}", Name, path, ex.Message);
                }
            });
        }
        return followed;
    }

    private string? PathOfKey(string key)
    {
        try
        {
            var path = DrivePath.FromObjectKey(key, Options.Prefix);
            return Options.CaseInsensitive ? FoldedPath.Resolve(Options.CachePath, path) : path;
        }
        catch (GeoDriveException)
        {
            return null;
        }
    }

    /// <summary>A drive that hears its peers, at start: every folder the cache has is listed again, to catch up with what it missed while down.</summary>
    public async Task<TreeSync> CatchUpWithBucketAsync(CancellationToken cancellationToken = default)
    {
        var synced = await _sync.SyncKnownFoldersAsync(cancellationToken);
        Record(DriveEventKind.Sync, null,
            $"Caught up with the bucket at start: {synced.Folders} folder(s) listed again; {synced.StubsMade} stub(s) and {synced.FoldersMade} folder(s) made.");
        return synced;
    }

    public ValueTask BeforeEnumerateAsync(string path, Caller caller, CancellationToken cancellationToken = default) =>
        IsInternalPath(path) || TreatmentFor(caller).FolderSync == SyncAction.Skip ? ValueTask.CompletedTask : _sync.BeforeEnumerateAsync(path, cancellationToken);

    public ValueTask<bool> LookupMissingAsync(string path, Caller caller, CancellationToken cancellationToken = default)
    {
        var treatment = TreatmentFor(caller);
        return IsInternalPath(path) || treatment.FileNotFound == SyncAction.Skip
            ? ValueTask.FromResult(false)
            : _sync.LookupMissingAsync(path, mayListFolder: treatment.FolderSync != SyncAction.Skip, cancellationToken);
    }

    public ValueTask<OpenDecision> OpenAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default) =>
        OpenCoreAsync(path, caller, intent, streaming: false, cancellationToken);

    public ValueTask<OpenDecision> OpenStreamingAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default) =>
        OpenCoreAsync(path, caller, intent, streaming: true, cancellationToken);

    private async ValueTask<OpenDecision> OpenCoreAsync(string path, Caller caller, OpenIntent intent, bool streaming, CancellationToken cancellationToken)
    {
        GuardInternal(path);
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            if (intent != OpenIntent.Read)
            {
                // Written from here by a handle whose close may not bring checksums: those of an earlier close no longer hold.
                _written.Forget(path);
            }
            var decision = await OpenLockedAsync(path, caller, intent, streaming, cancellationToken);
            if (intent != OpenIntent.Read && decision == OpenDecision.Local)
            {
                // The application's bytes never go under a recall's mark: a recall's still to be flushed (one this open
                // waited for included) is, first (ADR 0031).
                _recallFlushes.SettleLocked(path);
            }
            return decision;
        }
    }

    /// <summary>The open, with the path's lock held.</summary>
    private async ValueTask<OpenDecision> OpenLockedAsync(string path, Caller caller, OpenIntent intent, bool streaming, CancellationToken cancellationToken)
    {
        var openElsewhere = !_open.TryAdd(path, 0);
        var entry = _index.Get(path);
        if (entry is null)
        {
            return OpenDecision.Local;
        }
        if (entry.State == FileState.Recalling)
        {
            if (streaming && intent == OpenIntent.Read && Recalls.IsRecalling(path))
            {
                return OpenDecision.Recalling;
            }
            // A write or truncate waits for the recall in flight: no byte of the application's may be
            // overwritten by a range still arriving (docs/decisions.md, issue 4).
            try
            {
                entry = await RecallLockedAsync(entry, cancellationToken);
            }
            catch (Exception ex) when (intent == OpenIntent.Truncate && ex is not OperationCanceledException && _index.Get(path) is { } stub)
            {
                // The old bytes are thrown away anyway: the stub is overwritten below.
                entry = stub;
            }
            catch when (!openElsewhere)
            {
                _open.TryRemove(path, out _);
                throw;
            }
        }
        if (intent == OpenIntent.Truncate && entry.State is FileState.Stubbed or FileState.Cached)
        {
            // The application throws the old bytes away: nothing to recall, and the file is no
            // longer what the bucket holds.
            entry.DirtySinceUtc = _clock.UtcNow;
            _life.Apply(entry, FileChange.Written);
        }
        else if (entry.State is FileState.Stubbed or FileState.Cached)
        {
            // fileSync, then recall, stream or deny by the caller's process rule (DriveEngine.ProcessRules.cs).
            try
            {
                (entry, var decision) = await OpenUnderProcessRuleAsync(entry, caller, intent, openElsewhere, streaming, cancellationToken);
                if (entry.UnseenETag is not null && decision != OpenDecision.Deny)
                {
                    // The version a conflict put here is in front of the user now: replacing it here is knowing (ADR 0043).
                    // Not waited for: lost in a crash, the file only counts as unseen again.
                    entry.UnseenETag = null;
                    _life.Save(entry, deferred: true);
                }
                if (decision is { } answered)
                {
                    return answered;
                }
            }
            catch when (!openElsewhere)
            {
                _open.TryRemove(path, out _);
                throw;
            }
        }
        var now = _clock.UtcNow;
        if (entry.State is FileState.Dirty or FileState.Uploading or FileState.Excluded or FileState.Cached
            && now - entry.LastAccessUtc < AccessTimeResolution)
        {
            // Nothing above changed it and its access time is current (a create is followed at once by this
            // open; a recall above has just set it; a build opens one header many times a second): no index write.
            return OpenDecision.Local;
        }
        entry.LastAccessUtc = now;
        // Only the access time changed here (a recall or a sync above wrote its own state).
        _life.Save(entry, deferred: true);
        return OpenDecision.Local;
    }

    /// <summary>Opens closer together than this do not rewrite a local file's last access (accessWait is minutes to days).</summary>
    private static readonly TimeSpan AccessTimeResolution = TimeSpan.FromSeconds(1);

    public async ValueTask<int> ReadStreamedAsync(string path, long offset, Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var entry = _index.Get(path) ?? throw NotFound(path);
        var length = Math.Min(buffer.Length, entry.Size - offset);
        if (length <= 0)
        {
            return 0;
        }
        using var destination = new MemoryStream(buffer.Length);
        // Pinned as a recall is: a streamed read never mixes two versions of the object.
        await _store.GetAsync(entry.ObjectKey ?? KeyFor(path), destination, offset, length, new ObjectVersion(entry.ETag, entry.VersionId), cancellationToken);
        var bytes = destination.GetBuffer().AsSpan(0, (int)destination.Length);
        bytes.CopyTo(buffer.Span);
        return bytes.Length;
    }

    public async ValueTask<bool> FlushedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default)
    {
        if (!modified || _policy.Mode != UploadMode.Sync || IsInternalPath(path))
        {
            return false;
        }
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            if (LocalFile.Read(LocalPath(path)) is not { } local)
            {
                return false;
            }
            var entry = _index.Get(path) ?? NewEntry(path);
            var change = ApplyChange(entry, local);
            entry.LastAccessUtc = _clock.UtcNow;
            _life.Apply(entry, change);
            if (entry.State == FileState.Excluded)
            {
                return true;
            }
        }
        // Outside the lock: UploadAsync takes it itself. A failure reaches the application's close (the
        // file stays Dirty and the scheduler retries), so "close returned" keeps meaning "in the bucket".
        await UploadAsync(path, cancellationToken);
        return true;
    }

    public ValueTask ClosedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default) =>
        ClosedCoreAsync(path, modified, null, cancellationToken);

    public ValueTask ClosedWrittenAsync(string path, Caller caller, WrittenDigest written, CancellationToken cancellationToken = default) =>
        ClosedCoreAsync(path, modified: true, written, cancellationToken);

    private async ValueTask ClosedCoreAsync(string path, bool modified, WrittenDigest? written, CancellationToken cancellationToken)
    {
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            _open.TryRemove(path, out _);
            var entry = _index.Get(path);
            var local = LocalFile.Read(LocalPath(path));
            if (local is null)
            {
                return;
            }
            // Deferred: the close returns without waiting for the disk. After a crash the start-up scan
            // finds the change from the cache file itself (StartAsync); the upload's own writes are durable.
            if (entry is null || modified)
            {
                entry ??= NewEntry(path);
                entry.LastAccessUtc = _clock.UtcNow;
                var change = ApplyChange(entry, local.Value);
                _life.Apply(entry, change, deferred: true);
                if (written is not null)
                {
                    // Held for this change only: the generation it made and the file as it is now. A file kept local
                    // too: it may be renamed to a name that goes up (a download's temporary name).
                    _written.Hold(path, written, entry.Generation, local.Value);
                }
            }
            else if (_clock.UtcNow - entry.LastAccessUtc >= AccessTimeResolution)
            {
                // Kept to the second, as at open: a close right after the open (or the recall) writes nothing.
                entry.LastAccessUtc = _clock.UtcNow;
                _life.Save(entry, deferred: true);
            }
            // A Cached file that was open was skipped by the stubbing scan; its access wait starts now.
            _accessWaits.NeededFor(entry);
            // Settle 0: straight into the upload queue, not at the next tick.
            _uploads.QueueIfDue(entry);
        }
    }

    /// <summary>
    /// The entry of a file new under <paramref name="path"/>. Where a file renamed away from the name, replaced or deleted
    /// left a version it knew (<see cref="RenamedKeys.LeftVersion"/>), the new file may replace it: kept in its entry
    /// (<see cref="FileEntry.ReplacesETag"/>), so a restart before its upload does not turn the user's replacement into
    /// a conflict (randomized crash run, seed 1466328440: the entry that knew it was gone by then).
    /// </summary>
    private FileEntry NewEntry(string path) => new() { Path = path, ReplacesETag = _renamed.LeftVersion(KeyFor(path)) };

    public void Refused(string path, Caller caller, GeoDriveException reason) =>
        Record(DriveEventKind.Error, path.Length > 200 ? path[..200] + "…" : path, $"Refused for {(caller.ImageName.Length > 0 ? caller.ImageName : "a program")}: {reason.Message}", reason.ErrorId);

    public void Created(string path, Caller caller, bool isDirectory)
    {
        if (IsInternalPath(path))
        {
            return;
        }
        if (isDirectory)
        {
            // Journaled before the mkdir is acknowledged, so an empty folder reaches the bucket even after a crash.
            _owedChanges.OweFolderMarkers(FolderMarkers([path]));
            return;
        }
        using (_locks.AcquireAsync(path).GetAwaiter().GetResult())
        {
            var entry = _index.Get(path) ?? NewEntry(path);
            if (entry.State is FileState.Stubbed or FileState.Recalling)
            {
                // A create that met a stub the kernel did not know of yet (made by a bucket sync): its
                // sparse bytes are no change to upload; the open that follows recalls it first.
                return;
            }
            var change = ApplyChange(entry, LocalFile.Read(LocalPath(path)) ?? new LocalFile(0, _clock.UtcNow, UnixFileMode.None));
            entry.LastAccessUtc = _clock.UtcNow;
            // Deferred, as at close: the kernel serializes creates in one folder, so each waiting for the
            // disk would make a bulk copy one flush per file.
            _life.Apply(entry, change, deferred: true);
        }
    }

    public void Deleted(string path, Caller caller, bool isDirectory)
    {
        if (isDirectory)
        {
            _written.ForgetAt(path);
        }
        else
        {
            _written.Forget(path);
        }
        if (isDirectory && !IsInternalPath(path))
        {
            // rmdir: the folder was empty, so its own marker is the only one (a folder deleted with its tree is reported bottom up).
            _owedChanges.OweDeletes(FolderMarkers([path]));
        }
        var goners = isDirectory ? [.. _index.Under(path)] : _index.Get(path) is { } one ? [one] : new List<FileEntry>();
        foreach (var goner in goners)
        {
            _beingDeleted.Add(goner.Path);
        }
        try
        {
            // Journaled first, in one durable write, before the delete is acknowledged: a crash from here on
            // still deletes the objects, and the files never come back from the bucket as stubs. Each with the version
            // the file knew under its name (ForgetDeleted), so another site's change found there later is kept (ADR 0041).
            goners.ForEach(RememberVersionReplaced);
            _owedChanges.OweDeletes(goners.SelectMany(KeysOf));
            ForgetDeleted(path, goners);
        }
        finally
        {
            foreach (var goner in goners)
            {
                _beingDeleted.Remove(goner.Path);
            }
        }
    }

    /// <summary>
    /// A file written under a deleted file's name before the delete lands replaces the version the deleted file knew there
    /// (the user replaced that file): no conflict with it. The same version is journaled with the key's delete. A version a
    /// conflict put there unseen is not known (ADR 0043): the delete keeps it.
    /// </summary>
    private void RememberVersionReplaced(FileEntry deleted)
    {
        if (deleted.ObjectKey is { } key && key == KeyFor(deleted.Path))
        {
            RememberVersionReplaced(key, deleted);
        }
    }

    private void RememberVersionReplaced(string key, FileEntry replaced)
    {
        if (replaced.SeenETag is { } seen)
        {
            _renamed.ReplacedAt(key, seen);
        }
        else
        {
            _renamed.VersionGone(key);
        }
    }

    /// <summary>Each deleted file's entry goes under its lock (a stub, upload or recall of it ends first), then one event.</summary>
    private void ForgetDeleted(string path, List<FileEntry> goners)
    {
        var gone = 0;
        foreach (var goner in goners.Select(e => e.Path))
        {
            // Under the file's lock and from the index as it is now: a stub, upload or recall of the same
            // file either finished before or finds the entry gone.
            using (_locks.AcquireAsync(goner).GetAwaiter().GetResult())
            {
                if (_index.Get(goner) is not { } entry)
                {
                    continue;
                }
                RememberVersionReplaced(entry);
                // Changed since the journal was written (an upload landed meanwhile): owed too.
                _owedChanges.OweDeletes(KeysOf(entry));
                _life.Forget(entry.Path);
                _open.TryRemove(entry.Path, out _);
                Recalls.Move(entry.Path, null);
                gone++;
            }
        }
        if (gone > 0)
        {
            Record(DriveEventKind.Delete, path, gone == 1 ? "Deleted." : $"Deleted with {gone} files.");
        }
    }

    /// <summary>
    /// The keys a deleted file may have bytes under: the object it records, and its own key when an upload
    /// of it may be in flight (that upload's object must not outlive the file).
    /// </summary>
    private IEnumerable<string> KeysOf(FileEntry entry)
    {
        if (entry.ObjectKey is { } key)
        {
            yield return key;
        }
        if ((entry.ObjectKey is not null || entry.State is FileState.Uploading or FileState.Dirty) && KeyFor(entry.Path) != entry.ObjectKey)
        {
            // Also a renamed file's own name's key, whose copy was still owed: the object there is a file's it
            // replaced, or its copy landing (randomized crash test, seed 1722552388: a replaced file's object stayed).
            yield return KeyFor(entry.Path);
        }
    }

    /// <summary>
    /// A file or folder was renamed (the cache already shows the new name). Open handles and recalls
    /// follow first, then the index in one transaction; then each moved file is looked at under its
    /// lock, from the index as it is then, never from a copy read before: a stub made meanwhile stays a stub.
    /// </summary>
    public void Renamed(string oldPath, string newPath, Caller caller, bool isDirectory)
    {
        // Checksums are held by name and generation: a file's go along with it below (a folder's are forgotten).
        var carried = isDirectory ? null : _written.Take(oldPath);
        if (isDirectory)
        {
            _written.ForgetAt(oldPath);
            _written.ForgetAt(newPath);
        }
        else
        {
            _written.Forget(newPath);
        }
        // The index moves while no transition of a moving file (or of the file it replaces) is under way,
        // so none can write its entry back under the old name afterwards. Nobody else holds two path locks,
        // and these are taken in one order, so this cannot deadlock.
        var paths = EntriesAt(oldPath, isDirectory).Append(newPath).Distinct(StringComparer.Ordinal).Order(StringComparer.Ordinal).ToList();
        var held = paths.Select(path => _locks.AcquireAsync(path).GetAwaiter().GetResult()).ToList();
        int moved;
        string? replacedVersion = null;
        try
        {
            if (!isDirectory && _index.Get(newPath) is { ObjectKey: { } replacedKey } replaced && _index.Get(oldPath) is not null)
            {
                if (replacedKey != KeyFor(newPath))
                {
                    // Replaced by the file renamed onto its name, itself renamed with its bytes still under its old key
                    // (its copy owed): that key goes too (after the copy that reads it is settled), journaled before the
                    // index forgets it.
                    _owedChanges.OweDeletes([replacedKey]);
                }
                else
                {
                    // Its own name's key is the incoming file's to overwrite, the version it knew there included.
                    RememberVersionReplaced(replacedKey, replaced);
                    replacedVersion = replaced.SeenETag;
                }
            }
            // Recalled files still to be flushed are, before they move (or are replaced): what waits is known by its name (ADR 0031).
            paths.ForEach(_recallFlushes.SettleLocked);
            // Before the index shows the new name, so no stub scan can find it without its open handles.
            MoveOpenPaths(oldPath, newPath);
            // The keys its files hold go with the index, while both names are locked: an upload waiting to rescue a key's bytes follows them.
            moved = _renamed.Moving(oldPath, newPath, isDirectory, () => _index.Rename(oldPath, newPath));
            if (moved > 0)
            {
                Recalls.Move(oldPath, newPath);
            }
        }
        finally
        {
            held.ForEach(h => h.Dispose());
        }
        if (isDirectory && !IsInternalPath(newPath))
        {
            MoveFolderMarkers(oldPath, newPath);
        }
        if (moved == 0)
        {
            return;
        }
        var copies = new List<(string From, string To)>();
        var strays = new List<string>();
        foreach (var path in EntriesAt(newPath, isDirectory))
        {
            using (_locks.AcquireAsync(path).GetAwaiter().GetResult())
            {
                if (_index.Get(path) is { } entry)
                {
                    // What it may replace under a name it left is no longer its; under the name it took, the replaced file's version, or
                    // the one a file renamed away from that name left there (soak seeds 1715731933, 424208148: kept in memory only,
                    // it was lost in a restart and the user's replacement became a conflict).
                    var replaces = replacedVersion ?? _renamed.LeftVersion(KeyFor(path));
                    if (entry.ReplacesETag != replaces || entry.UnseenETag is not null)
                    {
                        entry.ReplacesETag = replaces;
                        // A conflict's stub renamed is a file the user has acted on as that file (ADR 0043): unseen no more.
                        entry.UnseenETag = null;
                        _life.Save(entry);
                    }
                    var movedAt = entry.Generation;
                    RenamedLocked(entry, oldPath + path[newPath.Length..], copies, strays);
                    if (carried is { } digest && LocalFile.Read(LocalPath(path)) is { } local)
                    {
                        _written.HoldRenamed(path, digest, movedAt, entry.Generation, local);
                    }
                }
            }
        }
        // One durable write each for the whole rename, before it is acknowledged: they resume after a crash.
        _owedChanges.OweCopies(copies);
        _owedChanges.OweDeletes(strays);
        Record(DriveEventKind.Rename, newPath, $"Renamed from '{oldPath}'.");
    }

    private void RenamedLocked(FileEntry entry, string oldPath, List<(string From, string To)> copies, List<string> strays)
    {
        if (entry.ObjectKey is { } oldKey && oldKey != KeyFor(entry.Path))
        {
            // The old key holds these bytes until they are under the new one; it is no new file to sync down.
            _renamed.Left(oldKey, entry.ETag);
        }
        var excluded = _policy.IsExcluded(entry.Path, isDirectory: false);
        switch (entry.State)
        {
            case FileState.Stubbed or FileState.Recalling when excluded:
                // Renamed to a name the policy keeps local: its bytes come home first (in the background, by the
                // tick), then it is Excluded and its old object goes. Until then the old key keeps them.
                _renamed.Track(entry);
                _renamed.BringHome(entry.Path);
                break;
            case FileState.Stubbed:
            case FileState.Recalling:
            case FileState.Cached when !excluded:
                // Clean: the bucket copies its object to the new key (server side), nothing goes up again.
                // Until then its bytes stay under the old key (kept in ObjectKey), which nothing may overwrite.
                _renamed.Track(entry);
                if (entry.ObjectKey is { } from && from != KeyFor(entry.Path))
                {
                    copies.Add((from, KeyFor(entry.Path)));
                }
                else if (Options.CaseInsensitive && entry.ObjectKey is { } key && DrivePath.Name(oldPath) != DrivePath.Name(entry.Path))
                {
                    // Only the case changed, so the key did not: the object's metadata takes the name as now written.
                    _owedChanges.OweMetadataUpdate(key);
                }
                break;
            default:
                if (KeyFor(oldPath) != entry.ObjectKey)
                {
                    // Changed locally, so its bytes are here: whatever an upload under the old name left there
                    // (one that landed while the file changed records no object) goes, once no file lives there.
                    strays.Add(KeyFor(oldPath));
                }
                if (LocalFile.Read(LocalPath(entry.Path)) is { } local)
                {
                    var change = ApplyChange(entry, local);
                    if (change == FileChange.Excluded && entry.ObjectKey is { } excludedKey)
                    {
                        // Renamed to a name the policy keeps local: its bytes are here, its old object goes.
                        _owedChanges.OweDeletes([excludedKey]);
                        entry.ObjectKey = null;
                    }
                    _life.Apply(entry, change);
                }
                break;
        }
    }

    /// <summary>
    /// See <see cref="IDriveFileSystem.PropertiesChanged"/>. A new time on a clean file (touch, a restore of times) is no new bytes: the index, and a stub's mark, take it, so it is neither uploaded again nor, for a
    /// stub, taken after a restart for bytes written into it. Then the object's metadata is owed the new properties.
    /// </summary>
    public void PropertiesChanged(string path, Caller caller)
    {
        if (IsInternalPath(path))
        {
            return;
        }
        using (_locks.AcquireAsync(path).GetAwaiter().GetResult())
        {
            // A recall's bytes still to be flushed are, before its new properties are recorded (ADR 0031).
            _recallFlushes.SettleLocked(path);
            if (_written.Holds(path) && LocalFile.Read(LocalPath(path)) is { } properties)
            {
                // A new time or mode is no new bytes (rsync and cp -p set them after the last write): checksums held stay.
                _written.Restamp(path, properties);
            }
            if (_index.Get(path) is not { State: FileState.Cached or FileState.Stubbed, Checksum: not null, ObjectKey: { } key } entry)
            {
                // A folder, a file the engine does not know, or one whose next upload (or copy) carries its properties.
                return;
            }
            // Also while open (touch opens the file to set its time): bytes written through a handle make the file Dirty at
            // its close, and nothing is stubbed without a fresh checksum of its bytes.
            if (LocalFile.Read(LocalPath(path)) is { } local && local.Size == entry.Size && local.ModifiedUtc != entry.ModifiedUtc)
            {
                entry.ModifiedUtc = local.ModifiedUtc;
                if (entry.State == FileState.Stubbed)
                {
                    StubMark.Write(Options.CachePath, LocalPath(path), MarkFor(entry, key));
                }
                _life.Save(entry);
            }
            if (key == KeyFor(path))
            {
                _owedChanges.OweMetadataUpdate(key);
            }
        }
    }

    /// <summary>The marker keys ("name/") of folders the bucket should show; excluded folders have none.</summary>
    private IEnumerable<string> FolderMarkers(IEnumerable<string> folders) =>
        folders.Where(f => f.Length > 0 && !_policy.IsExcluded(f, isDirectory: true)).Select(f => KeyFor(f) + "/");

    /// <summary>
    /// A folder renamed: it and every folder below it get markers under the new name, and the old name's markers go
    /// (deletes wait while a folder lives under a key again). Taken from the cache, which shows the new name already.
    /// </summary>
    private void MoveFolderMarkers(string oldPath, string newPath)
    {
        List<string> below;
        try
        {
            below = [.. Directory.EnumerateDirectories(LocalPath(newPath), "*", new EnumerationOptions { RecurseSubdirectories = true, AttributesToSkip = FileAttributes.ReparsePoint })
                .Select(d => newPath + "/" + Path.GetRelativePath(LocalPath(newPath), d).Replace(Path.DirectorySeparatorChar, '/'))];
        }
        catch (DirectoryNotFoundException)
        {
            // Renamed on or deleted meanwhile: that change owes its own markers.
            return;
        }
        var folders = below.Prepend(newPath).ToList();
        _owedChanges.OweFolderMarkers(FolderMarkers(folders));
        _owedChanges.OweDeletes(FolderMarkers(folders.Select(f => oldPath + f[newPath.Length..])));
    }

    /// <summary>The paths the index holds at <paramref name="path"/>: the file, or every file under the folder.</summary>
    private List<string> EntriesAt(string path, bool isDirectory) =>
        isDirectory ? [.. _index.Under(path).Select(e => e.Path)] : _index.Get(path) is not null ? [path] : [];

    /// <summary>Paths with open handles follow a rename of the file or of a folder above it.</summary>
    private void MoveOpenPaths(string oldPath, string newPath)
    {
        foreach (var path in _open.Keys)
        {
            if (path == oldPath || path.StartsWith(oldPath + "/", StringComparison.Ordinal))
            {
                _open.TryRemove(path, out _);
                _open.TryAdd(newPath + path[oldPath.Length..], 0);
            }
        }
    }

    /// <summary>See <see cref="IDriveFileSystem.LocalCopyReplaced"/>.</summary>
    public event Action<string>? LocalCopyReplaced;

    public string? GetStateAttribute(string path) => IsInternalPath(path) ? null : _index.Get(path)?.State.ToString();

    /// <summary>A local change: Dirty (or Excluded), a new generation, the settle delay restarts.</summary>
    /// <summary>New local bytes: records their size and time and says which change they are (Written, or Excluded for a name kept local).</summary>
    private FileChange ApplyChange(FileEntry entry, LocalFile local)
    {
        var change = _policy.IsExcluded(entry.Path, isDirectory: false) ? FileChange.Excluded : FileChange.Written;
        if (change == FileChange.Excluded && entry.ObjectKey is { } previous && previous != KeyFor(entry.Path))
        {
            // Renamed to a name kept local and now written: it will never be uploaded, so nothing else would
            // ever owe its old name's object the delete (journaled before the entry forgets the key).
            _owedChanges.OweDeletes([previous]);
            entry.ObjectKey = null;
        }
        entry.Size = local.Size;
        entry.ModifiedUtc = local.ModifiedUtc;
        entry.DirtySinceUtc = change == FileChange.Written ? _clock.UtcNow : null;
        entry.NextAttemptUtc = null;
        entry.FailedAttempts = 0;
        return change;
    }

    private void GuardInternal(string path)
    {
        if (IsInternalPath(path))
        {
            throw new GeoDriveException(ErrorIds.FileNotFound, ErrorKind.PermissionDenied,
                $"'{path}' is GeoDrive's own folder.", "Leave the .geodrive folder to GeoDrive.");
        }
        _ = DrivePath.Normalize(path);
    }
}
