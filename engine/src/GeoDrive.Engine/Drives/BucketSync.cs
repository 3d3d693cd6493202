using System.Collections.Concurrent;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;
using GeoDrive.Policies.Evaluation;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The bucket side of the front-end contract (docs/architecture.md, "The front-end contract"): a folder listing older
/// than updateWait is synced with the bucket first, a name missing locally is looked up in the bucket, and an open
/// asks whether the bucket holds a newer version (fileSync). Syncing adds stubs and folders, follows a newer version
/// of a clean file, and follows a remote delete of a clean file that nothing holds; nothing Dirty is ever touched,
/// and a bucket that does not answer within the check's deadline only means the cache is shown as it is.
/// Keys become drive paths here only, and a hostile one is refused once with an event.
/// </summary>
/// <param name="isRecalling">Whether a recall of the path is in flight (its object is not taken as deleted then).</param>
/// <param name="isOpen">Whether the path has an open handle.</param>
/// <param name="replaced">Tells the front end that a file's local copy was replaced or removed (its kernel caches go).</param>
internal sealed class BucketSync(
    DriveEngineOptions options,
    IObjectStore store,
    IFileIndex index,
    FileLife life,
    PathLocks locks,
    RenamedKeys renamed,
    OwedBucketChanges owed,
    Func<PolicyEvaluator> policy,
    IClock clock,
    Func<string> siteId,
    Func<string, bool> isRecalling,
    Func<string, bool> isOpen,
    Action<string> replaced,
    Action<DriveEventKind, string?, string, string?> record,
    ILogger logger)
{
    // HEADs of new objects in one folder sync: in parallel, a bounded batch at a time.
    private const int SyncBatchSize = 256;
    private const int SyncHeadConcurrency = 8;

    private readonly BucketCheckTimes _foldersListed = new();
    private readonly BucketCheckTimes _pathsChecked = new();

    // Folders in which a name missing in the cache was looked up in the bucket, within updateWait.
    private readonly BucketCheckTimes _foldersMissedIn = new();

    // Folder markers this run deleted: a server may go on listing their prefixes (DeletedFolders).
    private readonly DeletedFolders _deletedFolders = new();
    private BucketCheckGate? _bucketChecks;

    /// <summary>True while the bucket did not answer a check (a probe lets checks through again once it answers).</summary>
    public bool Silent => _bucketChecks?.Silent ?? false;

    /// <summary>Deadline and health gate of the checks below: a bucket that does not answer never holds a user's listing, lookup or open.</summary>
    private BucketCheckGate BucketChecks => LazyInitializer.EnsureInitialized(ref _bucketChecks, () => new BucketCheckGate(
        options.BucketCheckDeadline, clock,
        // Any answer will do (a missing key is one); the key is the engine's own, never a user's file.
        ct => store.HeadAsync(options.Prefix + DriveEngineOptions.InternalFolder + "/probe", ct),
        (path, message, errorId) => Record(errorId is null ? DriveEventKind.Sync : DriveEventKind.Error, path, message, errorId)));

    /// <summary>The path was just checked against the bucket (uploaded, stubbed, or its object looked at): not asked again within updateWait.</summary>
    public void Checked(string path) => _pathsChecked.Mark(path, clock.UtcNow, policy().UpdateWait);

    /// <summary>The path's next open asks the bucket again.</summary>
    public void CheckAgain(string path) => _pathsChecked.Forget(path);

    /// <summary>This drive changed its bucket: a folder marker deleted, or written again, is remembered (<see cref="DeletedFolders"/>).</summary>
    public void Made(BucketChangeMade change)
    {
        if (!change.Key.EndsWith('/'))
        {
            return;
        }
        if (change.Kind == BucketChangeMadeKind.Delete)
        {
            _deletedFolders.Deleted(change.Key);
        }
        else if (change.Kind == BucketChangeMadeKind.Put)
        {
            _deletedFolders.Written(change.Key);
        }
    }

    /// <summary>
    /// Whether the bucket holds an object under <paramref name="prefixKey"/>, a prefix its listing showed: taken as it
    /// is, but for the prefix of a folder removed here, whose listing some servers keep showing (<see cref="DeletedFolders"/>):
    /// that one is asked again without a delimiter.
    /// </summary>
    private async Task<bool> HoldsAnythingUnderAsync(string prefixKey, CancellationToken cancellationToken)
    {
        if (!_deletedFolders.WasDeleted(prefixKey))
        {
            return true;
        }
        await foreach (var _ in store.ListAsync(prefixKey, recursive: true, cancellationToken))
        {
            return true;
        }
        return false;
    }

    /// <summary>
    /// Before a folder is listed (the front end's caller allowed it): a listing older than updateWait is synced
    /// with the bucket first, within the check's deadline; the listing shows the cache as it is otherwise.
    /// </summary>
    public async ValueTask BeforeEnumerateAsync(string path, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        if (path.Length > 0 && policy().IsExcluded(path, isDirectory: true))
        {
            return;
        }
        var updateWait = policy().UpdateWait;
        if (_foldersListed.IsFresh(path, clock.UtcNow, updateWait))
        {
            return;
        }
        using (await locks.AcquireAsync(FolderLockName(path), cancellationToken))
        {
            var now = clock.UtcNow;
            if (_foldersListed.IsFresh(path, now, updateWait))
            {
                return;
            }
            // Marked before asking: a failed sync is tried again after updateWait, not at every listing.
            _foldersListed.Mark(path, now, updateWait);
            try
            {
                if (!(await BucketChecks.TryAsync(path, async (t, answered) => { await SyncFolderAsync(path, t, answered); return true; }, cancellationToken)).Answered)
                {
                    // Not asked, or no answer in time: the listing shows the cache, the next one asks again.
                    _foldersListed.Forget(path);
                }
            }
            catch (GeoDriveException ex)
            {
                // Unreachable is not empty: nothing is removed, the listing shows the cache as it is.
                Record(DriveEventKind.Error, path, $"The folder was not synced with the bucket; the listing shows the cache: {ex.Message}", ex.ErrorId);
            }
        }
    }

    /// <summary>
    /// A name missing in the cache (the front end's caller allowed the lookup): made as a stub or folder when the bucket has it.
    /// The first new name in a folder not synced within updateWait is asked alone (a HEAD); a second one syncs the folder, as
    /// a listing would (when <paramref name="mayListFolder"/>: the caller's folderSync allows it), and the cache answers the rest:
    /// a copy of many files into a folder the bucket has pays one listing, not a HEAD and a LIST per file.
    /// </summary>
    public async ValueTask<bool> LookupMissingAsync(string path, bool mayListFolder = true, CancellationToken cancellationToken = default)
    {
        if (path.Length == 0)
        {
            return false;
        }
        var key = KeyFor(path);
        if (!IsOwnKeyOf(key, path) || policy().IsExcluded(path, isDirectory: false))
        {
            return false;
        }
        var updateWait = policy().UpdateWait;
        var parent = DrivePath.Parent(path);
        if (_pathsChecked.IsFresh(path, clock.UtcNow, updateWait) || _foldersListed.IsFresh(parent, clock.UtcNow, updateWait))
        {
            // Asked within updateWait, or its folder was: a folder synced with the bucket (or found empty
            // there) has every object of the bucket as a stub already, so a name still missing is new.
            // This is what keeps a bulk copy into the drive from paying a HEAD and a LIST per file.
            return false;
        }
        if (mayListFolder && _foldersMissedIn.IsFresh(parent, clock.UtcNow, updateWait))
        {
            await BeforeEnumerateAsync(parent, cancellationToken);
            if (_foldersListed.IsFresh(parent, clock.UtcNow, updateWait))
            {
                return ExistsLocally(path);
            }
            // Not synced (the bucket did not answer in time, or the folder is kept local): the name is asked alone.
        }
        _foldersMissedIn.Mark(parent, clock.UtcNow, updateWait);
        using (await locks.AcquireAsync(path, cancellationToken))
        {
            var local = LocalPath(path);
            if (ExistsLocally(path))
            {
                // Another lookup of the same name made it meanwhile.
                return true;
            }
            var now = clock.UtcNow;
            if (_pathsChecked.IsFresh(path, now, updateWait) || !Directory.Exists(Path.GetDirectoryName(local)))
            {
                return false;
            }
            _pathsChecked.Mark(path, now, updateWait);
            if (index.Get(path) is not null || IsTombstoned(key))
            {
                return false;
            }
            try
            {
                var (answered, found) = await BucketChecks.TryAsync(path, async t =>
                    await store.HeadAsync(key, t) is { } head
                        ? CreateStubLocked(NamedAsRecorded(path, head), head)
                        : await CreateFolderIfInBucketAsync(path, key + "/", t), cancellationToken);
                if (!answered)
                {
                    // The name is new as far as the cache knows; asked again at the next lookup once the bucket answers.
                    _pathsChecked.Forget(path);
                }
                return found;
            }
            catch (GeoDriveException ex)
            {
                logger.LogWarning("{Drive}: could not look up '{Path}' in the bucket ({ErrorId}): {Message}", options.Name, path, ex.ErrorId, ex.Message);
                return false;
            }
        }
    }

    /// <summary>
    /// fileSync at open, with the path's lock held: for a Cached or Stubbed file not checked within
    /// updateWait, HEAD its object; a different version in the bucket replaces a Cached file that no
    /// other handle has open, and refreshes a stub. Dirty files are never checked: local changes win.
    /// </summary>
    public async Task<FileEntry> SyncFileLockedAsync(FileEntry entry, bool openElsewhere, CancellationToken cancellationToken)
    {
        var path = entry.Path;
        var now = clock.UtcNow;
        var updateWait = policy().UpdateWait;
        if (entry.State is not (FileState.Cached or FileState.Stubbed) || _pathsChecked.IsFresh(path, now, updateWait))
        {
            return entry;
        }
        if (entry.ObjectKey is { } recorded && !IsOwnKey(recorded, path))
        {
            // Renamed, its copy still owed: the object under its old key is no version of it (the old name's new file,
            // or another site's write there). Its copy, pinned to the version it records, settles it (soak seed
            // 1058385569: an open took the old name's new file for a newer version and replaced the renamed file's bytes).
            return entry;
        }
        _pathsChecked.Mark(path, now, updateWait);
        var key = entry.ObjectKey ?? KeyFor(path);
        ObjectInfo? head;
        try
        {
            bool answered;
            (answered, head) = await BucketChecks.TryAsync(path, t => store.HeadAsync(key, t), cancellationToken);
            if (!answered)
            {
                // Opened as the cache holds it; checked again at the next open.
                _pathsChecked.Forget(path);
                return entry;
            }
        }
        catch (GeoDriveException ex)
        {
            logger.LogWarning("{Drive}: could not check '{Path}' against the bucket ({ErrorId}): {Message}", options.Name, path, ex.ErrorId, ex.Message);
            return entry;
        }
        if (head is null && FollowsRemoteDelete(entry, openElsewhere))
        {
            RemoveDeletedRemotelyLocked(entry);
            throw DeletedInBucket(path);
        }
        if (head is null)
        {
            // A missing object of a file that is not clean (or in use) never removes local data: Dirty bytes go up again.
            return entry;
        }
        if (ObjectLayout.IsSameVersion(entry, head))
        {
            FollowPropertiesLocked(entry, head, key);
            return entry;
        }
        if (entry.State == FileState.Cached && openElsewhere)
        {
            // Its bytes are in use by another handle: not pulled away under it; asked again at the next open.
            _pathsChecked.Forget(path);
            return entry;
        }

        if (UploadAgainOverLateWriteLocked(entry, head))
        {
            return entry;
        }

        var previous = entry.State;
        FollowNewerVersionLocked(entry, head, key);
        Record(DriveEventKind.Sync, path, previous == FileState.Cached
            ? $"The bucket holds a newer version ({ByteSize.Format(entry.Size)}); the unchanged local copy was replaced by a stub of it."
            : $"The bucket holds a newer version ({ByteSize.Format(entry.Size)}); the stub now stands for it.");
        return entry;
    }

    /// <summary>What an open of a file that followed a delete in the bucket answers.</summary>
    public static GeoDriveException DeletedInBucket(string path) => new(
        ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
        $"'{path}' was deleted in the bucket (by another site or tool); its unchanged local copy was removed.",
        "Restore it from a bucket version if the delete was a mistake.");

    /// <summary>
    /// Whether a stub's open may let its recall be its fileSync check, one GET where a HEAD and a GET were (issue 13): the
    /// check is due, the stub stands for its own key, and its ETag is known, so the recall's GET (If-Match on that ETag) is
    /// refused when the bucket holds another version, or none.
    /// </summary>
    public bool RecallCanCheck(FileEntry entry) =>
        entry.State == FileState.Stubbed && !string.IsNullOrEmpty(entry.ETag)
        && (entry.ObjectKey is not { } recorded || IsOwnKey(recorded, entry.Path))
        && !_pathsChecked.IsFresh(entry.Path, clock.UtcNow, policy().UpdateWait);

    /// <summary>
    /// The recall that was a stub's check brought the stub's own version (path lock held): the path counts as checked, and
    /// properties another site gave that version since are taken, as they are from a HEAD's answer.
    /// </summary>
    public void CheckedByRecallLocked(FileEntry entry, ObjectInfo? answer)
    {
        Checked(entry.Path);
        if (answer is not null && entry.State == FileState.Cached && ObjectLayout.IsSameVersion(entry, answer))
        {
            FollowPropertiesLocked(entry, answer, entry.ObjectKey ?? KeyFor(entry.Path));
        }
    }

    /// <summary>
    /// Whether the bucket's version of a clean file is a late write of this drive's own, and the file then goes up again (path
    /// lock held): this site wrote it (<c>geodrive-site</c>), the file never recorded it, its bytes are not the file's and its
    /// time is older. Every upload and copy of this site is recorded before its file is clean again (a crash between leaves the
    /// file Dirty, or its copy owed), so such a version is a request an earlier run sent, or one this run gave up on, that the
    /// server stored after the file's newer upload: a rename's copy (no condition on what it replaces), a PUT to a server that
    /// takes no conditions. Followed, it made the file a stub of the old bytes and the newer ones were gone. A Cached file
    /// still has them: it is Dirty again and its upload puts them back over it (an upload may replace this site's own object).
    /// See docs/decisions/0039-a-late-write-over-a-newer-version.md.
    /// </summary>
    public bool UploadAgainOverLateWriteLocked(FileEntry entry, ObjectInfo head)
    {
        if (entry.State != FileState.Cached || head.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) != siteId()
            || entry.Checksum is not { } sha256 || ObjectLayout.RecordedChecksum(head) is not { } written
            || string.Equals(written, sha256, StringComparison.OrdinalIgnoreCase) || ObjectLayout.RecordedMtime(head) >= entry.ModifiedUtc)
        {
            return false;
        }
        entry.DirtySinceUtc = null;
        entry.NextAttemptUtc = null;
        entry.FailedAttempts = 0;
        life.Apply(entry, FileChange.LateWriteOver);
        Record(DriveEventKind.Sync, entry.Path,
            $"An older write of this drive (sent before a restart, or given up on) reached the bucket after the file's newer upload; the file's bytes here ({ByteSize.Format(entry.Size)}) go up again.");
        return true;
    }

    /// <summary>
    /// A clean file follows the bucket (path lock held): it becomes a stub of the bucket's version, the
    /// index first (a crash in between leaves a marked stub of another size that recovery keeps apart),
    /// and the kernel's caches of the old version are dropped before the caller's open returns.
    /// </summary>
    public void FollowNewerVersionLocked(FileEntry entry, ObjectInfo head, string key)
    {
        entry.Size = head.Size;
        entry.ModifiedUtc = ObjectLayout.RecordedMtime(head);
        ObjectLayout.TakeChecksums(entry, head);
        entry.ETag = head.ETag;
        entry.VersionId = head.VersionId;
        entry.ObjectKey = key;
        entry.LastError = null;
        life.Apply(entry, FileChange.BucketChanged);
        // The version's own properties where it records them (a GeoDrive upload records its owner); another tool's object
        // leaves the file's as they are, but for its time.
        var properties = ObjectLayout.RecordedProperties(head);
        NotApplied(entry.Path, LocalFile.MakeStub(options.CachePath, DataPath(entry.Path), entry.Size, entry.ModifiedUtc, MarkFor(entry, key),
            properties.RecordsOwner ? properties : null));
        replaced(entry.Path);
    }

    /// <summary>
    /// The bucket's version has this clean file's bytes, but another site changed its properties (chmod, chown, touch,
    /// setfattr, setfacl there: a metadata update, ADR 0018): the file here takes them, the index and a stub's mark first
    /// (the time is in both), and records that version. Never while this site owes the object its own properties, and never
    /// from this site's own object or another tool's (which records none): the file's own properties are then the newer.
    /// </summary>
    private void FollowPropertiesLocked(FileEntry entry, ObjectInfo head, string key)
    {
        if (head.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) is not { } site || site == siteId() || owed.IsMetadataUpdateOwed(key)
            || ObjectLayout.RecordedProperties(head) is not { RecordsOwner: true } recorded)
        {
            return;
        }
        var localPath = DataPath(entry.Path);
        if (FileProperties.Read(options.CachePath, localPath) is not { } local || local.Holds(recorded, Environment.IsPrivilegedProcess))
        {
            return;
        }
        entry.ModifiedUtc = recorded.Modified.ToDateTimeOffset();
        entry.ETag = head.ETag;
        entry.VersionId = head.VersionId;
        life.Save(entry);
        using (var handle = BeneathCache.OpenHandle(options.CachePath, localPath, FileMode.Open, FileAccess.Read))
        {
            if (entry.State == FileState.Stubbed)
            {
                StubMark.Write(handle, localPath, MarkFor(entry, key));
            }
            NotApplied(entry.Path, recorded.ApplyTo(handle, localPath));
        }
        replaced(entry.Path);
        Record(DriveEventKind.Sync, entry.Path, "Another site changed the file's properties (its bytes are the same); they were applied here.");
    }

    /// <summary>A stub that could not take some of its object's properties says which (it stands for its bytes all the same).</summary>
    public void NotApplied(string path, List<string> problems)
    {
        if (problems.Count > 0)
        {
            Record(DriveEventKind.Error, path, $"The stub was made without some of the properties its object records: {string.Join("; ", problems)}.", ErrorIds.PropertiesNotApplied);
        }
    }

    /// <summary>
    /// Restore-CloudFile, the path's lock held: the drive shows the restored version as a stub. A clean file or a stub
    /// follows it as it would follow another site's version; a file the drive no longer has comes back as a stub, its
    /// folders made first. False when the path cannot show it (a local file or folder took the name meanwhile).
    /// </summary>
    public bool ShowRestoredLocked(string path, FileEntry? entry, ObjectInfo head)
    {
        if (entry is not null)
        {
            FollowNewerVersionLocked(entry, head, head.Key);
        }
        else
        {
            var folders = path.Split('/')[..^1];
            for (var depth = 1; depth <= folders.Length; depth++)
            {
                var folder = string.Join('/', folders[..depth]);
                if (!Directory.Exists(LocalPath(folder)) && !CreateFolder(folder))
                {
                    return false;
                }
            }
            if (!CreateStubLocked(path, head))
            {
                return false;
            }
            replaced(path);
        }
        _pathsChecked.Mark(path, clock.UtcNow, policy().UpdateWait);
        return true;
    }

    /// <summary>Whether a delete, a rename's copy or a rename away from <paramref name="key"/> is still owed to the bucket.</summary>
    public bool HasOwedChange(string key) => IsTombstoned(key) || owed.IsCopySource(key);

    /// <param name="answered">Told when the bucket's listing first answers (the deadline is on that answer, not on a large folder's whole sync).</param>
    /// <summary>
    /// Whether a clean file whose object is gone follows that delete: only a Cached or Stubbed file whose
    /// recorded object is its own key (no copy of a rename pending), with no owed change on that key, no
    /// recall under way and no other handle open. Dirty files keep their bytes and upload them again.
    /// </summary>
    private bool FollowsRemoteDelete(FileEntry entry, bool openElsewhere) =>
        entry.State is FileState.Cached or FileState.Stubbed
        && entry.ObjectKey is { } own && IsOwnKey(own, entry.Path)
        && !openElsewhere
        && !owed.IsDeleteOwed(entry.ObjectKey)
        && !owed.IsCopySource(entry.ObjectKey)
        && !isRecalling(entry.Path);

    /// <summary>Removes a clean file deleted in the bucket (path lock held): the index first, then the cache file.</summary>
    public void RemoveDeletedRemotelyLocked(FileEntry entry)
    {
        life.Forget(entry.Path);
        try
        {
            File.Delete(LocalPath(entry.Path));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Left as an unknown cache file, which the next start examines like any other.
            logger.LogWarning("{Drive}: the cache file of '{Path}', deleted in the bucket, could not be removed: {Message}", options.Name, entry.Path, ex.Message);
        }
        replaced(entry.Path);
        Record(DriveEventKind.Sync, entry.Path, entry.State == FileState.Cached
            ? "Deleted in the bucket (by another site or tool): the unchanged local copy was removed."
            : "Deleted in the bucket (by another site or tool): the stub was removed.");
    }

    /// <summary>
    /// Clean files of <paramref name="folder"/> (direct children) that a listing did not show: each is asked
    /// again by HEAD under its lock, and a confirmed delete is followed. A listing that shows nothing at all
    /// while many clean files should be there is not taken as their delete (a wrong bucket, prefix or
    /// permission looks the same): an event says so instead.
    /// </summary>
    private async Task FollowRemoteDeletesAsync(string folder, HashSet<string> listedKeys, CancellationToken cancellationToken)
    {
        var prefix = folder.Length == 0 ? "" : folder + "/";
        var now = clock.UtcNow;
        var missing = index.Under(folder)
            .Where(e => e.Path.Length > prefix.Length && !e.Path.AsSpan(prefix.Length).Contains('/')
                        && e.State is FileState.Cached or FileState.Stubbed
                        && e.ObjectKey is { } own && IsOwnKey(own, e.Path) && !listedKeys.Contains(own)
                        && !_pathsChecked.IsFresh(e.Path, now, policy().UpdateWait))
            .Select(e => e.Path)
            .ToList();
        if (missing.Count == 0)
        {
            return;
        }
        if (listedKeys.Count == 0 && missing.Count >= MassDeleteGuard)
        {
            Record(DriveEventKind.Error, folder, $"The bucket lists nothing under this folder, where {missing.Count} unchanged files were verified; they are kept. If they were deleted on purpose, delete them here too.",
                ErrorIds.ObjectNotFound);
            return;
        }
        foreach (var path in missing)
        {
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                if (index.Get(path) is not { } entry || !FollowsRemoteDelete(entry, isOpen(path)))
                {
                    continue;
                }
                // The listing may have been taken before this file's upload landed: only a HEAD now says it is gone.
                if (await store.HeadAsync(entry.ObjectKey!, cancellationToken) is null)
                {
                    RemoveDeletedRemotelyLocked(entry);
                }
                else
                {
                    _pathsChecked.Mark(path, clock.UtcNow, policy().UpdateWait);
                }
            }
        }
    }

    /// <summary>A listing that shows nothing is not taken as the delete of this many clean files or more.</summary>
    private const int MassDeleteGuard = 10;

    /// <summary>
    /// Sync-CloudDrive: every folder under <paramref name="root"/> synced with the bucket now, whatever updateWait says,
    /// folder by folder from the top (a listing of each, as an `ls` of it would do), so the stubs and folders of the
    /// whole tree are made, empty folders included. Told to <paramref name="progress"/> after each folder.
    /// </summary>
    public async Task<TreeSync> SyncTreeAsync(string root, Action<TreeSync>? progress, CancellationToken cancellationToken)
    {
        root = DrivePath.Normalize(root);
        var done = new TreeSync(0, 0, 0);
        // A folder never listed is made by its parent's listing: the folders above it are synced first.
        var names = root.Length == 0 ? [] : root.Split('/');
        for (var depth = 0; depth < names.Length; depth++)
        {
            var above = string.Join('/', names[..depth]);
            using (await locks.AcquireAsync(FolderLockName(above), cancellationToken))
            {
                var counts = await SyncFolderAsync(above, cancellationToken);
                done = new TreeSync(done.Folders, done.FoldersMade + counts.Folders, done.StubsMade + counts.Stubs);
            }
        }
        if (root.Length > 0 && !Directory.Exists(LocalPath(root)))
        {
            throw new GeoDriveException(ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
                $"'{root}' is no folder of the drive or of the bucket.", "Give a folder's drive-relative path (Get-CloudFile lists the drive's files); without -Path the whole drive is synced.");
        }
        var pending = new Queue<string>([root]);
        while (pending.TryDequeue(out var folder))
        {
            if (folder.Length > 0 && (DriveEngineOptions.IsInternal(folder) || policy().IsExcluded(folder, isDirectory: true)))
            {
                continue;
            }
            SyncCounts counts;
            using (await locks.AcquireAsync(FolderLockName(folder), cancellationToken))
            {
                counts = await SyncFolderAsync(folder, cancellationToken);
                _foldersListed.Mark(folder, clock.UtcNow, policy().UpdateWait);
            }
            done = new TreeSync(done.Folders + 1, done.FoldersMade + counts.Folders, done.StubsMade + counts.Stubs);
            progress?.Invoke(done);
            var local = folder.Length == 0 ? Path.GetFullPath(options.CachePath) : LocalPath(folder);
            if (Directory.Exists(local))
            {
                foreach (var child in Directory.EnumerateDirectories(local).Order(StringComparer.Ordinal))
                {
                    var name = Path.GetFileName(child);
                    pending.Enqueue(folder.Length == 0 ? name : folder + "/" + name);
                }
            }
        }
        return done;
    }

    /// <summary>
    /// A peer said it changed <paramref name="keys"/> in the bucket: a hint, never the truth. The folder of each key is
    /// synced now as a listing would sync it, whatever updateWait says (the folders above it first, when the cache lacks
    /// them), and a clean file under a named key asks the bucket again (HEAD): a newer version is followed, a delete only
    /// once the bucket confirms it. Nothing is written or removed on the notice's word alone, so a forged or stale one
    /// costs requests, never data. Keys outside the drive's prefix, or hostile ones, are skipped.
    /// </summary>
    public async Task<PeerChangesFollowed> FollowToldChangesAsync(IReadOnlyCollection<string> keys, CancellationToken cancellationToken)
    {
        var paths = new SortedSet<string>(StringComparer.Ordinal);
        // A folder marker told of ("name/"): the folder is made by its parent's listing.
        var madeFolders = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var key in keys)
        {
            var isMarker = key.EndsWith('/');
            if (key.StartsWith(options.Prefix, StringComparison.Ordinal) && DrivePathOf(isMarker ? key.TrimEnd('/') : key) is { } keyPath
                && !policy().IsExcluded(keyPath, isDirectory: isMarker))
            {
                // On a case-insensitive drive, under the names the cache has (its lower-case key names "Docs/Report.TXT").
                (isMarker ? madeFolders : paths).Add(options.CaseInsensitive ? FoldedPath.Resolve(options.CachePath, keyPath) : keyPath);
            }
        }
        var done = new PeerChangesFollowed(0, 0, 0, 0);
        var folders = new SortedSet<string>(paths.Concat(madeFolders).Select(DrivePath.Parent), StringComparer.Ordinal);
        foreach (var path in paths)
        {
            // Checked before (a stub made, an upload): asked again now, so a listing that lacks it confirms its delete by HEAD.
            _pathsChecked.Forget(path);
        }
        foreach (var folder in folders)
        {
            if (folder.Length > 0 && policy().IsExcluded(folder, isDirectory: true))
            {
                continue;
            }
            var names = folder.Length == 0 ? [] : folder.Split('/');
            var reachable = true;
            for (var depth = 0; depth < names.Length && reachable; depth++)
            {
                var child = string.Join('/', names[..(depth + 1)]);
                if (Directory.Exists(LocalPath(child)))
                {
                    continue;
                }
                // A folder this drive never had is made by its parent's listing.
                var above = string.Join('/', names[..depth]);
                using (await locks.AcquireAsync(FolderLockName(above), cancellationToken))
                {
                    var made = await SyncFolderAsync(above, cancellationToken);
                    done = done with { Folders = done.Folders + 1, StubsMade = done.StubsMade + made.Stubs, FoldersMade = done.FoldersMade + made.Folders };
                }
                reachable = Directory.Exists(LocalPath(child));
            }
            if (!reachable)
            {
                continue;
            }
            using (await locks.AcquireAsync(FolderLockName(folder), cancellationToken))
            {
                var counts = await SyncFolderAsync(folder, cancellationToken);
                _foldersListed.Mark(folder, clock.UtcNow, policy().UpdateWait);
                done = done with { Folders = done.Folders + 1, StubsMade = done.StubsMade + counts.Stubs, FoldersMade = done.FoldersMade + counts.Folders };
            }
        }
        foreach (var path in paths)
        {
            using (await locks.AcquireAsync(path, cancellationToken))
            {
                if (index.Get(path) is not { State: FileState.Cached or FileState.Stubbed } entry)
                {
                    continue;
                }
                var before = (entry.ETag, entry.VersionId);
                try
                {
                    var after = await SyncFileLockedAsync(entry, isOpen(path), cancellationToken);
                    done = (after.ETag, after.VersionId) != before ? done with { Followed = done.Followed + 1 } : done;
                }
                catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.FileNotFound)
                {
                    // Deleted in the bucket, confirmed by its HEAD: removed, with its own event.
                }
            }
        }
        return done;
    }

    /// <summary>
    /// A drive that hears its peers catches up at start with what it missed while down: every folder the cache has is
    /// listed again (one LIST each, HEADs only for new objects), as a listing after updateWait would. Folders found new
    /// are made but not walked: their files come when they are listed or a peer tells of them.
    /// </summary>
    public async Task<TreeSync> SyncKnownFoldersAsync(CancellationToken cancellationToken)
    {
        var root = Path.GetFullPath(options.CachePath);
        var known = new List<string> { "" };
        var pending = new Stack<string>([""]);
        while (pending.TryPop(out var folder))
        {
            var local = folder.Length == 0 ? root : LocalPath(folder);
            IEnumerable<string> children;
            try
            {
                children = Directory.EnumerateDirectories(local).Select(Path.GetFileName).OfType<string>().ToList();
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                continue;
            }
            foreach (var name in children)
            {
                var child = folder.Length == 0 ? name : folder + "/" + name;
                if (DriveEngineOptions.IsInternal(child) || policy().IsExcluded(child, isDirectory: true)
                    || new FileInfo(LocalPath(child)).LinkTarget is not null)
                {
                    continue;
                }
                known.Add(child);
                pending.Push(child);
            }
        }
        var done = new TreeSync(0, 0, 0);
        foreach (var folder in known)
        {
            using (await locks.AcquireAsync(FolderLockName(folder), cancellationToken))
            {
                var counts = await SyncFolderAsync(folder, cancellationToken);
                _foldersListed.Mark(folder, clock.UtcNow, policy().UpdateWait);
                done = new TreeSync(done.Folders + 1, done.FoldersMade + counts.Folders, done.StubsMade + counts.Stubs);
            }
        }
        return done;
    }

    private readonly record struct SyncCounts(int Stubs, int Folders);

    private async Task<SyncCounts> SyncFolderAsync(string folder, CancellationToken cancellationToken, Action? answered = null)
    {
        var localFolder = folder.Length == 0 ? Path.GetFullPath(options.CachePath) : LocalPath(folder);
        if (!Directory.Exists(localFolder))
        {
            return default;
        }
        var listPrefix = folder.Length == 0 ? options.Prefix : KeyFor(folder) + "/";
        var batch = new List<(string Path, string Key)>(SyncBatchSize);
        var folders = 0;
        var stubs = 0;
        var listedKeys = new HashSet<string>(StringComparer.Ordinal);
        // A case-insensitive drive places each key under the local name of any case it has, and shows keys of one
        // name in two cases once: they are gathered first, so the choice does not depend on the listing's order.
        var localNames = options.CaseInsensitive ? LocalNamesByFold(localFolder) : null;
        var keysByName = options.CaseInsensitive ? new Dictionary<string, List<string>>(StringComparer.Ordinal) : null;
        await foreach (var listed in store.ListAsync(listPrefix, recursive: false, cancellationToken))
        {
            answered?.Invoke();
            listedKeys.Add(listed.Key);
            if (listed.Key == listPrefix)
            {
                // A zero-byte "folder marker" some tools write for the folder itself.
                continue;
            }
            if (listed.Key.EndsWith('/'))
            {
                folders += await CreateFolderForPrefixAsync(listed.Key, folder, localNames, cancellationToken) ? 1 : 0;
                continue;
            }
            if (keysByName is not null)
            {
                var name = DrivePath.FoldCase(listed.Key[listPrefix.Length..]);
                if (!keysByName.TryGetValue(name, out var keys))
                {
                    keysByName[name] = keys = new List<string>(1);
                }
                keys.Add(listed.Key);
                continue;
            }
            if (NewFileFor(listed.Key) is { } path)
            {
                batch.Add((path, listed.Key));
            }
            if (batch.Count >= SyncBatchSize)
            {
                stubs += await CreateStubsAsync(batch, cancellationToken);
                batch.Clear();
            }
        }
        foreach (var key in keysByName is null ? [] : ShownOnce(folder, keysByName, localNames!))
        {
            if (NewFileFor(key, folder, localNames) is { } path)
            {
                batch.Add((path, key));
            }
            if (batch.Count >= SyncBatchSize)
            {
                stubs += await CreateStubsAsync(batch, cancellationToken);
                batch.Clear();
            }
        }
        stubs += await CreateStubsAsync(batch, cancellationToken);
        if (stubs + folders > 0)
        {
            Record(DriveEventKind.Sync, folder, $"Folder synced with the bucket: {stubs} stub(s) and {folders} folder(s) added.");
        }
        await FollowRemoteDeletesAsync(folder, listedKeys, cancellationToken);
        return new SyncCounts(stubs, folders);
    }

    /// <summary>
    /// Case-insensitive drive: of the keys of one name (a list per folded name), the one shown: the key the drive's file of that
    /// name already stands for, else the key in the drive's case, else the ordinal-first. Each other key is named in an
    /// event, once per run.
    /// </summary>
    private IEnumerable<string> ShownOnce(string folder, Dictionary<string, List<string>> keysByName, Dictionary<string, string> localNames)
    {
        foreach (var keys in keysByName.Values)
        {
            if (keys.Count == 1)
            {
                yield return keys[0];
                continue;
            }
            keys.Sort(StringComparer.Ordinal);
            var known = localNames.TryGetValue(DrivePath.FoldCase(DrivePath.Name(keys[0])), out var localName)
                ? index.Get(DrivePath.Combine(folder, localName))?.ObjectKey
                : null;
            var shown = keys.FirstOrDefault(k => k == known) ?? keys.FirstOrDefault(k => ObjectLayout.IsFolded(options.Prefix, k)) ?? keys[0];
            foreach (var hidden in keys.Where(k => k != shown))
            {
                ReportKeyOnce(hidden, ErrorIds.ObjectNameTaken,
                    $"The object '{hidden}' is not shown: the drive compares names case-insensitively, and the object '{shown}' is shown under that name. Rename or remove one of them in the bucket, or use a case-sensitive drive for this bucket.");
            }
            yield return shown;
        }
    }

    /// <summary>The names in a cache folder by their folded form (the first of each, in ordinal order, when the folder holds one name in two cases).</summary>
    private static Dictionary<string, string> LocalNamesByFold(string localFolder)
    {
        var names = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var name in Directory.EnumerateFileSystemEntries(localFolder).Select(Path.GetFileName).Order(StringComparer.Ordinal))
        {
            names.TryAdd(DrivePath.FoldCase(name!), name!);
        }
        return names;
    }

    /// <summary>
    /// On a case-insensitive drive, a key's path under the cache folder's name of any case (the folder of
    /// <paramref name="folder"/> as the cache has it, the name as the cache has it if it has one); else the key's own path.
    /// </summary>
    private static string Placed(string path, string folder, Dictionary<string, string>? localNames)
    {
        if (localNames is null)
        {
            return path;
        }
        var name = DrivePath.Name(path);
        return DrivePath.Combine(folder, localNames.TryGetValue(DrivePath.FoldCase(name), out var local) ? local : name);
    }

    /// <summary>A new stub's path with its name as the object's metadata recorded it (geodrive-name), on a case-insensitive drive.</summary>
    private string NamedAsRecorded(string path, ObjectInfo head) =>
        options.CaseInsensitive && ObjectLayout.RecordedName(head, DrivePath.Name(path)) is { } name
            ? DrivePath.Combine(DrivePath.Parent(path), name)
            : path;

    /// <summary>Whether the cache has the path; on a case-insensitive drive, under a name of any case.</summary>
    private bool ExistsLocally(string path)
    {
        var local = LocalPath(path);
        if (Path.Exists(local) || !options.CaseInsensitive)
        {
            return Path.Exists(local);
        }
        var folder = Path.GetDirectoryName(local)!;
        var name = DrivePath.Name(path);
        return Directory.Exists(folder) && Directory.EnumerateFileSystemEntries(folder).Any(e => DrivePath.SameFolded(Path.GetFileName(e), name));
    }

    /// <summary>The drive path for a listed key when it is a file the cache does not have yet; null otherwise.</summary>
    private string? NewFileFor(string key, string folder = "", Dictionary<string, string>? localNames = null)
    {
        if (DrivePathOf(key) is not { } keyPath || policy().IsExcluded(keyPath, isDirectory: false) || IsTombstoned(key) || renamed.IsHeld(key))
        {
            return null;
        }
        var path = Placed(keyPath, folder, localNames);
        var local = LocalPath(path);
        if (Directory.Exists(local))
        {
            ReportKeyOnce(key, ErrorIds.ObjectNameTaken, $"The object '{key}' is not shown: the drive has a folder '{path}' (a folder of that name in the bucket, or one made here), and a drive cannot show a file and a folder under one name. Rename one of them in the bucket.");
            return null;
        }
        return Path.Exists(local) || index.Get(path) is not null ? null : path;
    }

    private async Task<int> CreateStubsAsync(List<(string Path, string Key)> batch, CancellationToken cancellationToken)
    {
        if (batch.Count == 0)
        {
            return 0;
        }
        var created = 0;
        var options = new ParallelOptions { MaxDegreeOfParallelism = SyncHeadConcurrency, CancellationToken = cancellationToken };
        await Parallel.ForEachAsync(batch, options, async (item, ct) =>
        {
            // The listing carries no user metadata: HEAD gives the checksum, time and mode to record.
            if (await store.HeadAsync(item.Key, ct) is not { } head)
            {
                return;
            }
            var path = NamedAsRecorded(item.Path, head);
            using (await locks.AcquireAsync(path, ct))
            {
                if (CreateStubLocked(path, head))
                {
                    Interlocked.Increment(ref created);
                }
            }
        });
        return created;
    }

    /// <summary>Makes a stub for an object, with the path's lock held; false when the path is taken or the file cannot be made.</summary>
    private bool CreateStubLocked(string path, ObjectInfo head)
    {
        string local;
        try
        {
            local = DataPath(path);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
        {
            Record(DriveEventKind.Error, path, $"No stub was made for the object '{head.Key}': {ex.Message}", ex.ErrorId);
            return false;
        }
        if (Path.Exists(local) || index.Get(path) is not null || IsTombstoned(head.Key) || renamed.IsHeld(head.Key))
        {
            return false;
        }
        var now = clock.UtcNow;
        var entry = new FileEntry
        {
            Path = path,
            Size = head.Size,
            ModifiedUtc = ObjectLayout.RecordedMtime(head),
            LastAccessUtc = now,
            Checksum = ObjectLayout.RecordedChecksum(head),
            Xxh128 = ObjectLayout.RecordedXxh128(head),
            ObjectKey = head.Key,
            ETag = head.ETag,
            VersionId = head.VersionId,
        };
        // Index first: a crash before the file exists only leaves an entry that recovery forgets. The
        // other order would leave a zero-filled file that recovery took for a new local file to upload.
        life.Apply(entry, FileChange.FoundAsStub);
        try
        {
            NotApplied(path, LocalFile.CreateStub(options.CachePath, local, entry.Size, ObjectLayout.RecordedProperties(head), MarkFor(entry, head.Key)));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            life.Forget(path);
            Record(DriveEventKind.Error, path, $"No stub was made for the object '{head.Key}': {ex.Message}", ErrorIds.CacheWriteFailed);
            return false;
        }
        _pathsChecked.Mark(path, now, policy().UpdateWait);
        return true;
    }

    private async Task<bool> CreateFolderForPrefixAsync(string prefixKey, string folder, Dictionary<string, string>? localNames, CancellationToken cancellationToken)
    {
        if (DrivePathOf(prefixKey) is not { } keyPath || policy().IsExcluded(keyPath, isDirectory: true) || HasTombstoneUnder(prefixKey))
        {
            return false;
        }
        if (options.CaseInsensitive && !ObjectLayout.IsFolded(options.Prefix, prefixKey))
        {
            // Its folder is listed under its lower-case key: what is under this one would never be shown in it.
            ReportKeyOnce(prefixKey, ErrorIds.ObjectNameTaken,
                $"The bucket's folder '{prefixKey}' is not shown: the drive compares names case-insensitively and lists a folder under its lower-case key ('{options.Prefix + DrivePath.FoldCase(prefixKey[options.Prefix.Length..])}'). Move its objects there in the bucket, or use a case-sensitive drive for this bucket.");
            return false;
        }
        var path = Placed(keyPath, folder, localNames);
        if (localNames is not null && !localNames.ContainsKey(DrivePath.FoldCase(DrivePath.Name(path)))
            && await store.HeadAsync(prefixKey, cancellationToken) is { } marker)
        {
            // New here: the folder takes its name as written where it was made, which its marker records.
            path = NamedAsRecorded(path, marker);
        }
        if (!Directory.Exists(LocalPath(path)) && !await HoldsAnythingUnderAsync(prefixKey, cancellationToken))
        {
            // A folder removed here, whose prefix the server still lists (its objects' delete markers).
            return false;
        }
        if (File.Exists(LocalPath(path)))
        {
            ReportKeyOnce(prefixKey, ErrorIds.ObjectNameTaken, $"The bucket's folder '{prefixKey}' is not shown: the drive has a file '{path}' (an object of that name, or a file written here), and a drive cannot show a file and a folder under one name. Rename one of them in the bucket.");
            return false;
        }
        return CreateFolder(path);
    }

    private async Task<bool> CreateFolderIfInBucketAsync(string path, string prefixKey, CancellationToken cancellationToken)
    {
        if (policy().IsExcluded(path, isDirectory: true) || HasTombstoneUnder(prefixKey))
        {
            return false;
        }
        // A folder removed here is asked for without a delimiter: some servers list the prefixes of deleted objects (DeletedFolders).
        await foreach (var _ in store.ListAsync(prefixKey, recursive: _deletedFolders.WasDeleted(prefixKey), cancellationToken))
        {
            return CreateFolder(path);
        }
        // Nothing in the bucket under this name: a folder the application makes of it now is in step
        // with the bucket, and the files it then creates there need no lookups (LookupMissingAsync).
        _foldersListed.Mark(path, clock.UtcNow, policy().UpdateWait);
        return false;
    }

    private bool CreateFolder(string path)
    {
        string local;
        try
        {
            local = DataPath(path);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
        {
            Record(DriveEventKind.Error, path, $"The folder was not made in the cache: {ex.Message}", ex.ErrorId);
            return false;
        }
        if (Path.Exists(local) || !Directory.Exists(Path.GetDirectoryName(local)))
        {
            // A local file or folder of that name wins; a parent removed meanwhile is not brought back.
            return false;
        }
        try
        {
            Directory.CreateDirectory(local);
            GiveFolderMode(path);
            return true;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            Record(DriveEventKind.Error, path, $"The folder was not made in the cache: {ex.Message}", ErrorIds.CacheWriteFailed);
            return false;
        }
    }

    /// <summary>Folders made from the bucket's keys; their stubs' modes are set, not masked, the same way.</summary>
    public const UnixFileMode FolderMode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute
        | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute;

    /// <summary>
    /// Gives a folder just made from the bucket <see cref="FolderMode"/> (rwxr-xr-x), whatever the service's umask: under a
    /// unit's UMask=0077 mkdir would have made it 0700, and no other user could enter it. Set through a descriptor opened
    /// beneath the cache, so no link is followed.
    /// </summary>
    private void GiveFolderMode(string path)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        var descriptor = BeneathCache.Open(options.CachePath, path, BeneathCache.ODirectory, 0);
        if (descriptor < 0)
        {
            throw new IOException($"the folder could not be opened to set its mode (errno {-descriptor})");
        }
        using var folder = new Microsoft.Win32.SafeHandles.SafeFileHandle(descriptor, ownsHandle: true);
        File.SetUnixFileMode(folder, FolderMode);
    }

    /// <summary>
    /// The drive path of a key from the bucket, or null (with an event) when the key could write
    /// outside the cache or into the engine's own folder. The only way a listed key becomes a path.
    /// </summary>
    private string? DrivePathOf(string key)
    {
        try
        {
            var path = DrivePath.FromObjectKey(key, options.Prefix);
            if (DriveEngineOptions.IsInternal(path.Split('/')[0]))
            {
                throw new GeoDriveException(ErrorIds.HostileObjectKey, ErrorKind.InvalidData,
                    $"The name '{key}' was refused: it names GeoDrive's own folder.",
                    "Rename or remove that object in the bucket; GeoDrive never writes into its own folder from the bucket.");
            }
            _ = LocalPath(path);
            return path;
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.HostileObjectKey)
        {
            ReportKeyOnce(key, ex.ErrorId, $"An object was skipped: {ex.Message}");
            return null;
        }
    }

    /// <summary>Once per key and run: every later listing of its folder skips it without another event.</summary>
    private void ReportKeyOnce(string key, string errorId, string message)
    {
        if (_refusedKeys.TryAdd(key, 0))
        {
            Record(DriveEventKind.Error, null, message, errorId);
        }
    }

    // Keys from the bucket refused as drive paths and already reported in an event.
    private readonly ConcurrentDictionary<string, byte> _refusedKeys = new(StringComparer.Ordinal);

    /// <summary>True when <paramref name="key"/> maps back to exactly <paramref name="path"/> (a name from an application, not the bucket).</summary>
    private bool IsOwnKeyOf(string key, string path)
    {
        try
        {
            return DrivePath.FromObjectKey(key, options.Prefix) == (options.CaseInsensitive ? DrivePath.FoldCase(path) : path);
        }
        catch (GeoDriveException)
        {
            return false;
        }
    }

    private static string FolderLockName(string folder) => "\0folder-sync:" + folder;

    // A key this drive renamed away from, owes a delete, or owes a copy to (whose object may land after its file moved on).
    private bool IsTombstoned(string key) => renamed.WasLeft(key) || owed.IsDeleteOwed(key) || owed.IsCopyOwedTo(key);

    private bool HasTombstoneUnder(string prefixKey) =>
        renamed.AnyLeftUnder(prefixKey) || owed.HasDeleteOwedUnder(prefixKey) || owed.HasCopyOwedUnder(prefixKey);

    private void Record(DriveEventKind kind, string? path, string message, string? errorId = null) => record(kind, path, message, errorId);

    private string LocalPath(string path) => DrivePath.ToLocal(options.CachePath, path);

    private string DataPath(string path) => CacheLinks.DataPath(options.CachePath, path);

    private string KeyFor(string path) => ObjectLayout.KeyFor(options.Prefix, path, options.CaseInsensitive);

    private bool IsOwnKey(string key, string path) => ObjectLayout.IsOwnKey(options.Prefix, key, path, options.CaseInsensitive);

    private StubMark MarkFor(FileEntry entry, string key) => StubMark.For(entry, key, KeyFor(entry.Path));
}

/// <summary>What a Sync-CloudDrive has done so far: folders listed, and folders and stubs made.</summary>
public readonly record struct TreeSync(int Folders, int FoldersMade, long StubsMade);
