using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    /// <summary>Get-CloudFileVersion: every version and delete marker of the file's object, newest first.</summary>
    public Task<IReadOnlyList<StoredVersion>> GetVersionsAsync(string path, CancellationToken cancellationToken = default) =>
        _store.ListVersionsAsync(KeyFor(DrivePath.Normalize(path)), cancellationToken);

    /// <summary>
    /// Restore-CloudFile (docs/architecture.md, "Versions"): copies a version of the file's object over its key, so it is
    /// the current version again as a new one (every version stays in the bucket), and the drive shows it as a stub.
    /// <paramref name="versionId"/> null with <paramref name="deleted"/>: the newest version before the delete.
    /// Only a file whose bytes are all in the bucket is replaced: local changes not uploaded, an open file, a recall
    /// under way, or a change of its key still owed to the bucket refuse the restore and nothing is touched.
    /// </summary>
    public async Task<FileEntry> RestoreVersionAsync(string path, string? versionId, bool deleted, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        var key = KeyFor(path);
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path);
            RefuseRestoreOver(path, key, entry, deleted);
            var versions = await _store.ListVersionsAsync(key, cancellationToken);
            var target = ChooseVersion(path, versions, versionId, deleted);
            if (target.IsLatest && entry is not null)
            {
                // Already the current version: nothing to copy, and the drive stands for it (its fileSync follows the bucket).
                return entry;
            }
            // Written by this site now: another site holding changes of the file compares with it as another site's
            // version (both kept), not as its own upload, which the version's old site id would have said.
            var restored = await _store.RestoreVersionAsync(key, target.VersionId, new Dictionary<string, string> { [ObjectLayout.SiteKey] = SiteId }, cancellationToken);
            // The lock was held across the requests: the entry is as it was checked.
            if (!_sync.ShowRestoredLocked(path, entry, restored))
            {
                throw new GeoDriveException(ErrorIds.CacheWriteFailed, ErrorKind.InvalidOperation,
                    $"Version '{target.VersionId}' of '{path}' is the bucket's current version again, but the drive could not show it: a local file or folder took its name, or its folder could not be made.",
                    "Get-CloudDriveEvent -Path names the cause; once it is fixed the file appears at the folder's next sync.");
            }
            Record(DriveEventKind.Restore, path,
                $"Version '{target.VersionId}' of {target.LastModifiedUtc:u} ({ByteSize.Format(target.Size)}) restored by Restore-CloudFile: the bucket's current version again, as version '{restored.VersionId ?? "null"}'; the drive shows it as a stub.");
            ChangeMade(new BucketChangeMade(BucketChangeMadeKind.Put, key));
            await SayWhatTheRestorePassedOverAsync(path, key, versions[0], restored, cancellationToken);
            return _index.Get(path) ?? throw NotFound(path);
        }
    }

    /// <summary>
    /// The copy cannot be made conditional on what the key holds (S3 and Ceph take no condition on a copy's destination):
    /// another site may have written the file between the listing and the copy. Its version is not lost (the bucket keeps
    /// versions), but it is no longer current: the drive says so, naming it, so it is never replaced silently.
    /// </summary>
    private async Task SayWhatTheRestorePassedOverAsync(string path, string key, StoredVersion currentBefore, ObjectInfo restored, CancellationToken cancellationToken)
    {
        if (restored.VersionId is not { } restoredId)
        {
            return;
        }
        var after = await _store.ListVersionsAsync(key, cancellationToken);
        var at = after.ToList().FindIndex(v => v.VersionId == restoredId);
        if (at < 0)
        {
            return;
        }
        var passedOver = after.Skip(at + 1).TakeWhile(v => v.VersionId != currentBefore.VersionId).Where(v => !v.IsDeleteMarker).ToList();
        if (passedOver.Count > 0)
        {
            Record(DriveEventKind.Conflict, path,
                $"Written in the bucket while the restore ran (by another site or tool), and no longer current: version(s) {string.Join(", ", passedOver.Select(v => $"'{v.VersionId}' of {v.LastModifiedUtc:u}"))}. They are kept; Restore-CloudFile -VersionId brings one back.");
        }
    }

    private void RefuseRestoreOver(string path, string key, FileEntry? entry, bool deleted)
    {
        if (entry is null)
        {
            if (Directory.Exists(DrivePath.ToLocal(Options.CachePath, path)))
            {
                throw new GeoDriveException(ErrorIds.ObjectNameTaken, ErrorKind.InvalidOperation,
                    $"'{path}' is a folder on the drive; a file of that name cannot be restored beside it.",
                    "Rename or remove the folder, then restore the file.");
            }
        }
        else if (deleted)
        {
            throw new GeoDriveException(ErrorIds.FileNotDeleted, ErrorKind.InvalidOperation,
                $"'{path}' is not deleted: the drive holds it ({entry.State}).",
                "To bring back an older version, name it with -VersionId (Get-CloudFileVersion lists them).");
        }
        else if (entry.State is FileState.Dirty or FileState.Uploading)
        {
            throw new GeoDriveException(ErrorIds.FileNotUploaded, ErrorKind.InvalidOperation,
                $"'{path}' has changes that are not in the bucket yet; restoring a version now would replace them.",
                "Wait until it is uploaded (Get-CloudFile shows Cached) or upload it now with Invoke-ForceUpload, then restore: its current bytes stay in the bucket as a version of their own.");
        }
        else if (entry.State == FileState.Excluded)
        {
            throw new GeoDriveException(ErrorIds.FileExcluded, ErrorKind.InvalidOperation,
                $"'{path}' is excluded by the drive's policy and kept local only; a version from the bucket would replace its bytes.",
                "Move the local file aside first, or change the policy's excludes.");
        }
        else if (entry.State == FileState.Recalling || _open.ContainsKey(path))
        {
            throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.ResourceUnavailable,
                $"'{path}' is {(entry.State == FileState.Recalling ? "being recalled" : "open")}; its bytes are not replaced under a reader.",
                "Close it (or wait for the recall) and restore again.");
        }
        if (_sync.HasOwedChange(key) || (entry?.ObjectKey is { } recorded && recorded != key))
        {
            throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.ResourceUnavailable,
                $"A delete or rename of '{path}' has not reached the bucket yet; a version restored now could be deleted or moved by it.",
                "Try again once Get-CloudDriveStatus shows no bucket changes owed.");
        }
    }

    private static StoredVersion ChooseVersion(string path, IReadOnlyList<StoredVersion> versions, string? versionId, bool deleted)
    {
        if (versions.Count == 0)
        {
            throw new GeoDriveException(ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
                $"The bucket holds no version of '{path}'.",
                "Check the path (Get-CloudFileVersion -Path lists what the bucket keeps); a bucket without versioning keeps no deleted file.");
        }
        if (deleted && !versions[0].IsDeleteMarker)
        {
            throw new GeoDriveException(ErrorIds.FileNotDeleted, ErrorKind.InvalidOperation,
                $"'{path}' is not deleted in the bucket: its current version is '{versions[0].VersionId}'.",
                "To bring back an older version, name it with -VersionId (Get-CloudFileVersion lists them).");
        }
        if (versionId is null)
        {
            return versions.FirstOrDefault(v => !v.IsDeleteMarker) ?? throw new GeoDriveException(ErrorIds.VersionNotFound, ErrorKind.ObjectNotFound,
                $"The bucket holds only delete markers of '{path}': no version of its bytes is left.", "Nothing to restore from this bucket.");
        }
        var target = versions.FirstOrDefault(v => v.VersionId == versionId) ?? throw new GeoDriveException(ErrorIds.VersionNotFound, ErrorKind.ObjectNotFound,
            $"The bucket holds no version '{versionId}' of '{path}'.",
            "Get-CloudFileVersion lists the file's versions.");
        if (target.IsDeleteMarker)
        {
            throw new GeoDriveException(ErrorIds.VersionNotFound, ErrorKind.InvalidArgument,
                $"Version '{versionId}' of '{path}' is a delete marker, not bytes to bring back.",
                "Name a version that is not a delete marker, or use -Deleted for the newest version before the delete.");
        }
        return target;
    }
}
