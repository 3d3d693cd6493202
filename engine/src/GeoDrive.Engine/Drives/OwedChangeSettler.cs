using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;
using GeoDrive.Policies.Evaluation;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Pays what the bucket journal owes (docs/architecture.md, "The bucket journal"), a batch at each tick: deletes
/// of old keys once nothing needs them, server-side copies of renamed clean files (pinned to the recorded
/// version, verified, recorded, then the old key owed its delete), and sweeps of multipart uploads left open.
/// A change that fails stays owed, with backoff, and is tried again after a restart. A key's own file is held
/// off (its upload lock and its path lock) while a change to that key is made, so no upload lands between.
/// </summary>
/// <param name="uploadLocks">The locks each file's upload holds (the same the engine's uploads take).</param>
/// <param name="beingDeleted">Paths whose delete is journaled and whose entry goes once their lock is free.</param>
/// <param name="siteId">This drive's site id, written into a copy's metadata as into an upload's.</param>
/// <param name="copyFailed">A renamed file whose old object is gone or replaced: the engine decides what it uploads.</param>
/// <param name="ontoTakenName">A renamed clean file whose new name holds another site's version it never knew: its bytes
/// come home and it goes up as changed, so the conflict rule keeps both.</param>
/// <param name="rescueDisplaced">Before a copy lands on a key: a renamed file whose bytes still live there (its own copy
/// still owed) comes home first, as before an upload to the key.</param>
/// <param name="endpointAnswered">The endpoint answered a change: what waited only for it (owed changes, uploads) goes now.</param>
/// <param name="lateWriteOver">A clean file whose key holds this site's older write that landed late: it goes up again (path lock
/// held; <see cref="BucketSync.UploadAgainOverLateWriteLocked"/>).</param>
/// <param name="made">Told of each delete and rename's copy once it is done (the sites sharing the bucket hear of it).</param>
internal sealed class OwedChangeSettler(
    DriveEngineOptions options,
    IObjectStore store,
    IFileIndex index,
    FileLife life,
    PathLocks locks,
    PathLocks uploadLocks,
    KeyCounts beingDeleted,
    RenamedKeys renamed,
    OwedBucketChanges owed,
    Func<PolicyEvaluator> policy,
    Func<string> siteId,
    Func<string, string, GeoDriveException, CancellationToken, Task> copyFailed,
    Func<string, string, CancellationToken, Task> ontoTakenName,
    Func<string, string, CancellationToken, Task> rescueDisplaced,
    Action endpointAnswered,
    Func<FileEntry, ObjectInfo, bool> lateWriteOver,
    Action<DriveEventKind, string?, string, string?> record,
    Action<BucketChangeMade> made)
{
    public async Task<int> SettleAsync(CancellationToken cancellationToken)
    {
        await LookAtLateWritesAsync(cancellationToken);
        var deleted = 0;
        // A settled copy owes its old key's delete: a second pass takes it in the same tick.
        for (var pass = 0; pass < 2; pass++)
        {
            var (settled, unreachable) = await SettleDueChangesAsync(cancellationToken);
            deleted += settled;
            if (unreachable)
            {
                break;
            }
        }
        return deleted;
    }

    /// <summary>One batch of due changes; true when the endpoint could not be reached (the rest of the batch was not tried).</summary>
    private async Task<(int Deleted, bool Unreachable)> SettleDueChangesAsync(CancellationToken cancellationToken)
    {
        var deleted = 0;
        var due = owed.Due(options.TickBatchSize);
        for (var i = 0; i < due.Count; i++)
        {
            var change = due[i];
            try
            {
                if (change.Kind == BucketChangeKind.AbortMultipartUpload)
                {
                    await SweepMultipartUploadsAsync(change, cancellationToken);
                }
                else if (change.Kind == BucketChangeKind.CopyObject)
                {
                    await SettleCopyAsync(change, cancellationToken);
                }
                else if (change.Kind == BucketChangeKind.UpdateMetadata)
                {
                    await SettleMetadataUpdateAsync(change, cancellationToken);
                }
                else if (change.Kind == BucketChangeKind.PutFolderMarker)
                {
                    await PutFolderMarkerAsync(change, cancellationToken);
                }
                else if (await DeleteOwedObjectAsync(change, cancellationToken))
                {
                    deleted++;
                }
                // The endpoint answered: changes that waited only for it are due (the second pass takes them).
                endpointAnswered();
            }
            catch (GeoDriveException ex)
            {
                // Still owed: tried again with backoff (or once the endpoint answers again), and after a restart; an orphan costs space, never data.
                owed.Failed(change, ex.Message, ex.ErrorId == ErrorIds.EndpointUnreachable);
                Record(DriveEventKind.Error, change.Key, change.Kind switch
                {
                    BucketChangeKind.DeleteObject => $"Could not delete the object of a deleted or renamed file; will retry: {ex.Message}",
                    BucketChangeKind.CopyObject => $"Could not copy a renamed file's object from '{change.SourceKey}'; will retry: {ex.Message}",
                    BucketChangeKind.PutFolderMarker => $"Could not write the folder's marker into the bucket; will retry: {ex.Message}",
                    BucketChangeKind.UpdateMetadata => $"Could not write the file's changed properties into its object's metadata; will retry: {ex.Message}",
                    _ => $"Could not abort an interrupted multipart upload; will retry: {ex.Message}",
                }, ex.ErrorId);
                if (ex.ErrorId == ErrorIds.EndpointUnreachable)
                {
                    // The rest would only ask the same endpoint (each for as long as a request's timeout, when it is frozen),
                    // each with its own error line: they wait for its answer untried, and the tick goes on to its other work.
                    owed.WaitForEndpoint(due.Skip(i + 1));
                    return (deleted, true);
                }
            }
        }
        return (deleted, false);
    }

    /// <summary>
    /// Aborts what a multipart upload that ended may have left open under its key: the upload itself if its
    /// abort failed, and any upload the server started for a request whose answer was lost. Every upload open
    /// under the key is aborted unless this run is sending its parts; while another upload of the key is being
    /// started, the sweep waits for it. No time window narrows it: servers' "initiated" times cannot be trusted
    /// (moto answers a fixed date). See docs/architecture.md, "The bucket journal".
    /// </summary>
    private async Task SweepMultipartUploadsAsync(BucketChange change, CancellationToken cancellationToken)
    {
        if (owed.IsMultipartInFlight(change.Key))
        {
            return;
        }
        if (change.UploadId is { } recorded)
        {
            // Journaled by an earlier version, after the start: its id is known.
            await store.AbortMultipartUploadAsync(change.Key, recorded, cancellationToken);
        }
        foreach (var open in await store.ListMultipartUploadsAsync(change.Key, cancellationToken))
        {
            if (!owed.IsUploadLive(open.UploadId))
            {
                await store.AbortMultipartUploadAsync(change.Key, open.UploadId, cancellationToken);
            }
        }
        owed.Done(change);
    }

    /// <summary>
    /// Deletes an owed key unless a file lives (or is about to be uploaded) under it again, which ends the
    /// debt. While a renamed file still needs the key's bytes (its copy or recall is pending) the delete
    /// waits. The key's own file is held off meanwhile (its upload and its lock), so no upload to the key
    /// can land before the delete.
    /// </summary>
    private async Task<bool> DeleteOwedObjectAsync(BucketChange change, CancellationToken cancellationToken)
    {
        var key = change.Key;
        if (!MayDeleteNow(change))
        {
            return false;
        }
        var path = OwnPathOf(key);
        using (path is null ? null : await uploadLocks.AcquireAsync(path, cancellationToken))
        using (path is null ? null : await locks.AcquireAsync(path, cancellationToken))
        {
            if (!MayDeleteNow(change))
            {
                return false;
            }
            if (owed.IsMadeOnce(change))
            {
                var lateWrite = await DeleteLateWriteAsync(key, path, cancellationToken);
                owed.Done(change);
                return lateWrite;
            }
            var there = key.EndsWith('/') ? null : await store.HeadAsync(key, cancellationToken);
            if (there is not null && there.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) != siteId()
                && !ObjectLayout.SameETag(there.ETag, renamed.LeftVersion(key) ?? change.KnownETag))
            {
                KeepAnotherSitesVersion(change, path);
                return false;
            }
            try
            {
                // Only the version just looked at (If-Match): a server that takes a delete's condition (AWS S3, moto) refuses
                // it over a version written since, one that ignores it (Ceph 16) leaves the window one request long (ADR 0044).
                await (there is { ETag: { Length: > 0 } etag } ? store.DeleteAsync(key, etag, cancellationToken) : store.DeleteAsync(key, cancellationToken));
            }
            catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch)
            {
                // Written after the look: owed still, looked at again at the next tick (another site's change is kept then).
                return false;
            }
            if (!owed.MadeOnce(change))
            {
                owed.Done(change);
            }
            renamed.Forget(key);
            renamed.VersionGone(key);
            made(new BucketChangeMade(BucketChangeMadeKind.Delete, key));
            return true;
        }
    }

    /// <summary>
    /// The file that left <paramref name="change"/>'s key here (deleted, or renamed away) knew a version there, or none (new
    /// here, never uploaded), and the key now holds another one, of another site or tool, that this drive never knew: a
    /// change made elsewhere to the file deleted or renamed here, or another site's own new file of that name. Deleting it
    /// would lose it (and the other site would follow the delete and remove its own copy). It stays, and shows here again
    /// as that file (docs/decisions/0041-a-delete-here-never-removes-a-change-made-elsewhere.md).
    /// The version known is kept with the journaled delete, so a restart in between keeps the rule.
    /// </summary>
    private void KeepAnotherSitesVersion(BucketChange change, string? path)
    {
        owed.Done(change);
        renamed.Forget(change.Key);
        renamed.VersionGone(change.Key);
        Record(DriveEventKind.Conflict, path ?? change.Key,
            $"Not deleted from the bucket: '{change.Key}' holds a version another site or tool wrote that this drive never knew, changed there while the file was deleted or renamed away here. Both are kept: it shows here again under its name.");
    }

    /// <summary>
    /// A key deleted after a start, looked at again once the requests an earlier run sent have had the drive's late-write
    /// grace to land (<see cref="OwedBucketChanges.MadeOnce"/>): an object this site wrote there, where no file lives
    /// (<see cref="MayDeleteNow"/>), is one of them, and goes too. Left there, the sync brought it back as the deleted file
    /// (randomized crash run, seed 1310022743). Another site's object there is its own new file, and stays.
    /// </summary>
    private async Task<bool> DeleteLateWriteAsync(string key, string? path, CancellationToken cancellationToken)
    {
        if (await store.HeadAsync(key, cancellationToken) is not { } there || there.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) != siteId())
        {
            return false;
        }
        await store.DeleteAsync(key, cancellationToken);
        Record(DriveEventKind.Delete, path ?? key,
            "A write sent before the restart reached the bucket after its file was deleted; its object was deleted too.");
        made(new BucketChangeMade(BucketChangeMadeKind.Delete, key));
        return true;
    }

    /// <summary>
    /// Once the late-write grace has passed: the keys an earlier run's copies were to write, and its uploads'. A copy names
    /// nothing it may replace (nor does a PUT to a server that takes no conditions), so one the dead run sent may have been
    /// stored after this run's own write and the file's newer bytes went up; a clean file whose key then holds that older
    /// write of this site's goes up again at once, rather than at its next open (ADR 0039), so the bucket and the other
    /// sites do not keep the old bytes meanwhile.
    /// </summary>
    private async Task LookAtLateWritesAsync(CancellationToken cancellationToken)
    {
        var keys = owed.TakeLateWriteKeys();
        for (var i = 0; i < keys.Count; i++)
        {
            if (OwnPathOf(keys[i]) is not { } path)
            {
                continue;
            }
            try
            {
                using (await locks.AcquireAsync(path, cancellationToken))
                {
                    if (index.Get(path) is { State: FileState.Cached } entry && entry.ObjectKey == keys[i]
                        && await store.HeadAsync(keys[i], cancellationToken) is { } there && !ObjectLayout.IsSameVersion(entry, there))
                    {
                        lateWriteOver(entry, there);
                    }
                }
            }
            catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.EndpointUnreachable)
            {
                owed.LookAtLateWritesAgain(keys.Skip(i));
                return;
            }
            catch (GeoDriveException ex)
            {
                Record(DriveEventKind.Error, path, $"Could not look at the object a copy sent before the restart may have replaced: {ex.Message}", ex.ErrorId);
            }
        }
    }

    /// <summary>
    /// A folder made here goes into the bucket as a zero-byte marker under its key and a '/', with this site's id and the
    /// folder's time, while the folder is still there (its path lock held: a delete of the folder waits for the marker,
    /// and owes its delete after).
    /// </summary>
    private async Task PutFolderMarkerAsync(BucketChange change, CancellationToken cancellationToken)
    {
        if (OwnPathOf(change.Key) is not { } path)
        {
            owed.Done(change);
            return;
        }
        using (await locks.AcquireAsync(path, cancellationToken))
        {
            if (Directory.Exists(LocalPath(path)))
            {
                var metadata = new Dictionary<string, string>
                {
                    [ObjectLayout.SiteKey] = siteId(),
                    [ObjectLayout.MtimeKey] = Directory.GetLastWriteTimeUtc(LocalPath(path)).ToString("O", System.Globalization.CultureInfo.InvariantCulture),
                };
                if (options.CaseInsensitive)
                {
                    // Its lower-case key loses the folder's case: a new host makes it under the name as written.
                    ObjectLayout.AddName(metadata, path);
                }
                await store.PutAsync(change.Key, Stream.Null, 0, metadata, cancellationToken);
                made(new BucketChangeMade(BucketChangeMadeKind.Put, change.Key));
            }
            owed.Done(change);
        }
    }

    /// <summary>False when the delete is no longer owed (it is then done) or must wait (it stays owed, due at the next tick).</summary>
    private bool MayDeleteNow(BucketChange change)
    {
        if (change.Key.EndsWith('/') && OwnPathOf(change.Key) is { } folder && Directory.Exists(LocalPath(folder)))
        {
            // A folder marker whose folder was made again: the folder lives, so does its marker.
            owed.Done(change);
            return false;
        }
        if (OwnPathOf(change.Key) is { } path && index.Get(path) is not null)
        {
            if (beingDeleted.Contains(path))
            {
                // The entry seen is the deleted file's own, about to be forgotten (its delete waits for the lock):
                // no file lives under the key again, the delete waits for the next tick.
                return false;
            }
            owed.Done(change);
            renamed.Forget(change.Key);
            return false;
        }
        return !renamed.IsStillNeeded(change.Key) && !owed.IsCopySource(change.Key);
    }

    /// <summary>
    /// A renamed clean file's object is copied to its new key (server side, pinned to the version the entry
    /// records), verified, recorded, and then its old key is owed a delete. The file's uploads are held off
    /// meanwhile; its lock only around the decisions, so opening it never waits for the copy. A file changed
    /// meanwhile is uploaded instead; an object replaced or gone in the bucket makes a Cached file upload its
    /// own bytes.
    /// </summary>
    private async Task SettleCopyAsync(BucketChange change, CancellationToken cancellationToken)
    {
        var from = change.SourceKey!;
        if (OwnPathOf(change.Key) is not { } path)
        {
            owed.Done(change);
            return;
        }
        using (await uploadLocks.AcquireAsync(path, cancellationToken))
        {
            // A file renamed away from the key whose copy is still owed (two files swapped by three renames) needs
            // the object this copy would replace: its bytes come home first. Copied over, a stub's were lost.
            await rescueDisplaced(change.Key, path, cancellationToken);
            FileEntry? entry = null;
            Dictionary<string, string>? metadata = null;
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                var found = index.Get(path);
                if (found is { State: FileState.Recalling } && found.ObjectKey == from)
                {
                    // Being recalled from the old key: the copy waits for the recall's end (due again at the next tick).
                    // A recall that fails leaves a stub that still needs it; one that succeeds makes the file Dirty, and
                    // its upload ends the debt. Dropped here, the copy was never made and the stub kept the old key for
                    // good (soak seed 1567145310: a stub renamed with its folder, read during an outage).
                    return;
                }
                if (found is not { State: FileState.Cached or FileState.Stubbed } current || current.ObjectKey != from)
                {
                    if (found?.ObjectKey == change.Key)
                    {
                        // Copied and recorded before a crash: only the old key's delete may be missing.
                        owed.OweDeletes([from]);
                    }
                    // Moved on or deleted (found is null): settled below, once the lock is free (it asks the bucket).
                    // Otherwise changed: its upload deletes the old key once verified.
                    if (found is not null)
                    {
                        owed.Done(change);
                        return;
                    }
                }
                else
                {
                    entry = current;
                    if (entry.Checksum is { } sha256)
                    {
                        // The new path's own metadata (its policy tags may differ); a foreign object keeps its own.
                        metadata = MetadataOf(path, entry, sha256);
                    }
                }
            }
            if (entry is null)
            {
                await SettleMovedOnAsync(change, cancellationToken);
                return;
            }
            // What the new name holds is asked first. Another site's version this drive never knew there means both changed,
            // and both are kept; copied over, it was gone without a word. The copy then names what it found as what it may
            // replace: a server that takes a copy's conditions (AWS S3) refuses it over a file written since, and the next
            // tick asks again. One that ignores them (Ceph 16, moto) still replaces such a file: the window is one request long.
            var there = await store.HeadAsync(change.Key, cancellationToken);
            if (there is not null && !MayReplace(there, change.Key, entry))
            {
                await ontoTakenName(path, from, cancellationToken);
                owed.Done(change);
                return;
            }
            ObjectInfo copied;
            try
            {
                var multipart = new JournaledMultipart(owed, change.Key, static () => true);
                copied = await store.CopyAsync(from, change.Key, new ObjectVersion(entry.ETag, entry.VersionId), metadata, multipart, PutCondition.Replacing(there), cancellationToken);
            }
            catch (GeoDriveException ex) when (ex.ErrorId is ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound)
            {
                if (!ObjectLayout.IsSameObject(await store.HeadAsync(change.Key, cancellationToken), there))
                {
                    // The new name changed since the look (the copy's own condition refused it): owed still, looked at again.
                    return;
                }
                owed.Done(change);
                await copyFailed(path, from, ex, cancellationToken);
                return;
            }
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                var now = index.Get(path);
                if (now is { State: FileState.Recalling } && now.ObjectKey == from)
                {
                    // Its recall started during the copy and reads the old key: nothing is recorded or deleted under it.
                    // The copy stays owed (made again, server side, once the recall ended as a stub).
                    return;
                }
                if (now is null || now.Generation != entry.Generation || now.ObjectKey != from
                    || copied.Size != entry.Size || (entry.Checksum is { } sha && ObjectLayout.RecordedChecksum(copied) != sha))
                {
                    // Deleted or changed during the copy (its own upload or delete covers the keys), or a copy
                    // that does not hold the bytes: the new key's object is not this file's; tried as a delete.
                    owed.OweDeletes([change.Key]);
                    owed.Done(change);
                    return;
                }
                now.ObjectKey = change.Key;
                now.ReplacesETag = null;
                now.ETag = copied.ETag;
                now.VersionId = copied.VersionId;
                life.Save(now);
                renamed.Release(from, path);
            }
            // After the entry names the new key (a crash between leaves an old copy, never the only one).
            owed.OweDeletes([from]);
            owed.Done(change);
            made(new BucketChangeMade(BucketChangeMadeKind.Rename, change.Key, from));
        }
    }

    /// <summary>
    /// The metadata a clean file's object gets when a copy makes it anew (a rename, a change of properties): the file's
    /// checksum, size and time, its mode and other properties as the cache file has them, this site, the path's tags.
    /// </summary>
    private Dictionary<string, string> MetadataOf(string path, FileEntry entry, string sha256)
    {
        var properties = FileProperties.Read(options.CachePath, LocalPath(path));
        var metadata = ObjectLayout.MetadataFor(sha256, entry.Checksum == sha256 ? entry.Xxh128 : null, entry.Size, entry.ModifiedUtc, properties?.Mode ?? UnixFileMode.UserRead | UnixFileMode.UserWrite);
        metadata[ObjectLayout.SiteKey] = siteId();
        if (options.CaseInsensitive)
        {
            ObjectLayout.AddName(metadata, path);
        }
        ObjectLayout.AddTags(metadata, policy().TagsFor(path), path, entry.ModifiedUtc);
        ObjectLayout.AddObjectTags(metadata, policy().ObjectTagsFor(path), path, entry.ModifiedUtc);
        if (properties is not null)
        {
            // What does not fit was named when the bytes went up.
            _ = PropertyMetadata.Add(metadata, properties);
        }
        return metadata;
    }

    /// <summary>
    /// A clean file's properties changed here (chmod, chown, touch, setfattr, setfacl): its object is copied onto itself
    /// (server side) with its metadata made anew from the file, only while the bucket's current version is still the one
    /// the file records, and the file then records the copy's version. A file changed since carries its properties in its
    /// upload, a renamed one in its copy; another site's version in the bucket is never replaced (the sync's rules take it).
    /// </summary>
    private async Task SettleMetadataUpdateAsync(BucketChange change, CancellationToken cancellationToken)
    {
        if (OwnPathOf(change.Key) is not { } path)
        {
            owed.Done(change);
            return;
        }
        using (await uploadLocks.AcquireAsync(path, cancellationToken))
        {
            FileEntry entry;
            Dictionary<string, string> metadata;
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                var found = index.Get(path);
                if (found is { State: FileState.Recalling or FileState.Uploading })
                {
                    // A recall reads the version the file records, an upload is about to record another: due again at the next tick.
                    return;
                }
                if (found is not { State: FileState.Cached or FileState.Stubbed, Checksum: { } sha256 } || found.ObjectKey != change.Key)
                {
                    owed.Done(change);
                    return;
                }
                owed.Begun(change);
                entry = found.Clone();
                metadata = MetadataOf(path, entry, sha256);
            }
            if (await store.HeadAsync(change.Key, cancellationToken) is not { } there || !ObjectLayout.IsSameVersion(entry, there)
                || !ObjectLayout.SameETag(there.ETag, entry.ETag))
            {
                // Gone or replaced in the bucket: copied over, another site's version would be lost.
                owed.Done(change);
                return;
            }
            if (SaysAlready(there, metadata))
            {
                // chmod to the mode it had, a kernel's setattr of the time it has: a copy would only add a version.
                owed.Done(change);
                return;
            }
            ObjectInfo copied;
            try
            {
                copied = await store.CopyAsync(change.Key, change.Key, new ObjectVersion(entry.ETag, entry.VersionId), metadata,
                    new JournaledMultipart(owed, change.Key, static () => true), cancellationToken: cancellationToken);
            }
            catch (GeoDriveException ex) when (ex.ErrorId is ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound)
            {
                owed.Done(change);
                return;
            }
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                if (index.Get(path) is { } now && now.ObjectKey == change.Key && now.ETag == entry.ETag && now.Generation == entry.Generation
                    && copied.Size == entry.Size && ObjectLayout.RecordedChecksum(copied) == entry.Checksum)
                {
                    now.ETag = copied.ETag;
                    now.VersionId = copied.VersionId;
                    life.Save(now);
                }
            }
            owed.Done(change);
            made(new BucketChangeMade(BucketChangeMadeKind.Put, change.Key));
        }
    }

    /// <summary>Whether the object's metadata already is <paramref name="metadata"/> (but for which site wrote it, and the tags, which are no metadata).</summary>
    private static bool SaysAlready(ObjectInfo there, Dictionary<string, string> metadata)
    {
        static bool Compared(string key) => key != ObjectLayout.SiteKey && key != ObjectLayout.ObjectTaggingKey;
        var wanted = metadata.Where(m => Compared(m.Key)).ToList();
        return wanted.Count == there.Metadata.Count(m => Compared(m.Key))
            && wanted.All(m => there.Metadata.TryGetValue(m.Key, out var value) && value == m.Value);
    }

    /// <summary>
    /// A copy whose file moved on or was deleted before it was made. The old key goes too: its file may have been copied
    /// and recorded just before a crash that lost the old key's delete, and deleted after the restart, when its delete
    /// owed only the new key (soak seed 1349217573: the old key stayed in the bucket for good). A delete waits while a
    /// file moved on still needs the old key, and ends when a file lives under it again. The copy's own key goes when
    /// what it holds is this drive's doing: after a try whose answer may have been lost (the server may have made the
    /// copy all the same), or when it holds this site's object or a version a file replaced here knew, which the copy
    /// was to replace (soak seeds 1039595146, 202268412, 1700429339: a file renamed over another and renamed on
    /// before its copy left the replaced file's object for good). Another site's object there is never deleted.
    /// </summary>
    private async Task SettleMovedOnAsync(BucketChange change, CancellationToken cancellationToken)
    {
        var ownsKey = change.Attempts > 0
            || (await store.HeadAsync(change.Key, cancellationToken) is { } there && IsThisDrivesDoing(there, change.Key));
        // A copy an earlier run sent may still be made on the server after these deletes.
        owed.OweDeletes(ownsKey ? [change.SourceKey!, change.Key] : [change.SourceKey!], afterEarlierRun: owed.IsInherited(change));
        owed.Done(change);
    }

    /// <summary>This site's own object (an upload, or a copy), or the version a file renamed away, replaced or deleted here knew.</summary>
    private bool IsThisDrivesDoing(ObjectInfo there, string key) =>
        there.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) == siteId() || ObjectLayout.SameETag(there.ETag, renamed.LeftVersion(key));

    /// <summary>
    /// Whether a renamed file's copy may replace <paramref name="there"/>, the object its new name holds: this site's own
    /// (an earlier try of this copy, or an upload of a file gone since), the version a file renamed away, replaced or
    /// deleted here knew (<see cref="RenamedKeys.LeftVersion"/>, <see cref="FileEntry.ReplacesETag"/>), or the copy's very bytes.
    /// </summary>
    private bool MayReplace(ObjectInfo there, string key, FileEntry entry) =>
        IsThisDrivesDoing(there, key)
        || ObjectLayout.SameETag(there.ETag, entry.ETag)
        || ObjectLayout.SameETag(there.ETag, entry.ReplacesETag)
        || (entry.Checksum is { } sha256 && string.Equals(ObjectLayout.RecordedChecksum(there), sha256, StringComparison.OrdinalIgnoreCase));

    /// <summary>
    /// The drive path a key of this drive's prefix names, or null for a key that names none. On a case-insensitive drive, as
    /// the cache has it (a lower-case key names "Docs/Report.TXT", which the index and the cache know by that name).
    /// </summary>
    private string? OwnPathOf(string key)
    {
        if (!key.StartsWith(options.Prefix, StringComparison.Ordinal))
        {
            return null;
        }
        try
        {
            var path = DrivePath.FromObjectKey(key.TrimEnd('/'), options.Prefix);
            return options.CaseInsensitive ? FoldedPath.Resolve(options.CachePath, path) : path;
        }
        catch (GeoDriveException)
        {
            return null;
        }
    }

    private void Record(DriveEventKind kind, string? path, string message, string? errorId = null) => record(kind, path, message, errorId);

    private string LocalPath(string path) => DrivePath.ToLocal(options.CachePath, path);
}
