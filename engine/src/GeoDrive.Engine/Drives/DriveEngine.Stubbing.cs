using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    /// <summary>
    /// Replaces a Cached file's local data by a stub — only after proving, at this moment, that the
    /// local bytes still hash to what was uploaded and that the bucket's object holds them.
    /// Refuses (with an error id and a remedy) for Dirty, Excluded, open or missing files.
    /// </summary>
    public async Task<FileEntry> StubAsync(string path, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path) ?? throw NotFound(path);
            switch (entry.State)
            {
                case FileState.Stubbed:
                    return entry;
                case FileState.Excluded:
                    throw new GeoDriveException(ErrorIds.FileExcluded, ErrorKind.InvalidOperation,
                        $"'{path}' matches an exclude of the drive's policy: it is never uploaded, so it cannot be stubbed.",
                        "Change the policy's excludes if the file should go to the bucket.");
                case FileState.Dirty or FileState.Uploading or FileState.Recalling:
                    throw new GeoDriveException(ErrorIds.FileNotUploaded, ErrorKind.InvalidOperation,
                        $"'{path}' is {entry.State}: its current bytes are not verified in the bucket yet, so it cannot be stubbed.",
                        "Run Invoke-ForceUpload for it first, or wait until Get-CloudFile shows it Cached.");
            }
            if (_open.ContainsKey(path))
            {
                throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.ResourceUnavailable,
                    $"'{path}' is open; an open file is never stubbed.",
                    "Close the application that uses it and try again.");
            }
            if (MayStillBeWrittenLate(entry))
            {
                var until = _owedChanges.LateWritesLandedUtc;
                throw new GeoDriveException(ErrorIds.LateWritePossible, ErrorKind.ResourceUnavailable,
                    $"'{path}' is not stubbed before {until:u}: a request the service sent to the bucket before it last stopped may still write the file's object until then, and a stub would stand for whatever lands.",
                    $"Nothing to do: the stubbing policy stubs it after {until:u}, or run Invoke-ForceStub again then.");
            }

            var localPath = DataPath(path);
            var local = LocalFile.Read(localPath);
            if (local is null)
            {
                // Renamed or deleted under us: the mount's rename or delete, arriving next, moves or drops the entry.
                throw NotFound(path);
            }
            if (local.Value.Size != entry.Size || local.Value.ModifiedUtc != entry.ModifiedUtc || entry.Checksum is null)
            {
                MarkDirty(entry, local.Value);
                throw ChangedSinceUpload(path);
            }
            // MD5 only where the object's ETag is one (a single PUT); computed later if the HEAD says so.
            var check = await FileHashes.CheckAsync(Options.CachePath, localPath, entry, withMd5: ObjectLayout.IsPlainMd5(entry.ETag), cancellationToken);
            if (!check.Same)
            {
                MarkDirty(entry, local.Value);
                throw ChangedSinceUpload(path);
            }
            var key = entry.ObjectKey ?? KeyFor(path);
            var head = await _store.HeadAsync(key, cancellationToken);
            if (head is not null && check.Md5 is null && ObjectLayout.IsPlainMd5(head.ETag))
            {
                check = await FileHashes.CheckAsync(Options.CachePath, localPath, entry, withMd5: true, cancellationToken);
                if (!check.Same)
                {
                    MarkDirty(entry, local.Value);
                    throw ChangedSinceUpload(path);
                }
            }
            if (head is not null && !ObjectLayout.IsSameVersion(entry, head))
            {
                if (_sync.UploadAgainOverLateWriteLocked(entry, head))
                {
                    throw new GeoDriveException(ErrorIds.FileNotUploaded, ErrorKind.InvalidOperation,
                        $"The bucket's object '{key}' is an older write of this drive that landed after '{path}' was uploaded; the file was not stubbed and goes up again.",
                        "Nothing to do: stub it once Get-CloudFile shows it Cached again.");
                }
                // Another site or tool replaced the object of this unchanged file: the clean file follows
                // the bucket (it becomes a stub of that version), and nothing is uploaded over it.
                _sync.FollowNewerVersionLocked(entry, head, key);
                Record(DriveEventKind.Sync, path, $"The bucket holds a newer version ({ByteSize.Format(entry.Size)}); the unchanged local copy became a stub of it.");
                return entry;
            }
            if (head is null || !ObjectLayout.Holds(head, entry.Size, entry.Checksum, check.Md5))
            {
                MarkDirty(entry, local.Value);
                throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                    $"The bucket's object '{key}' no longer holds the bytes of '{path}' (missing, or changed by someone else); the file was not stubbed.",
                    "GeoDrive will upload the local file again; check who else writes to the bucket.");
            }

            // That HEAD is a check against the bucket: the open that recalls the stub need not repeat it.
            _sync.Checked(path);

            // The index says Stubbed before the data goes: after a crash in between, recovery finds a
            // "stub" with its data still there and simply re-stubs it; never the other way round.
            if (!_life.Apply(entry, FileChange.Stubbed, decidedOn: entry.Generation))
            {
                throw ChangedSinceUpload(path);
            }
            StubMark.Write(Options.CachePath, localPath, MarkFor(entry, key));
            try
            {
                LocalStubs.MakeStub(entry, localPath);
            }
            catch (GeoDriveException)
            {
                // The front end refused (ProjFS: the file is open or changed); its data is untouched.
                StubMark.Clear(localPath);
                _life.Apply(entry, FileChange.StubRefused);
                _accessWaits.NeededBy(_clock.UtcNow);
                throw;
            }
            Record(DriveEventKind.Stub, path, $"Stubbed; {ByteSize.Format(entry.Size)} freed, data in '{key}'.");
            return entry;
        }
    }

    /// <summary>
    /// Whether a file may not be stubbed now (the stubbing scans pass it by): it is open, or a request an earlier run sent may
    /// still write its object (docs/decisions/0040-no-stub-within-the-late-write-grace.md).
    /// </summary>
    private bool StubWaits(FileEntry entry) => _open.ContainsKey(entry.Path) || MayStillBeWrittenLate(entry);

    /// <summary>A request an earlier run sent may still write the object the file's stub would stand for, or its own name's key.</summary>
    private bool MayStillBeWrittenLate(FileEntry entry) =>
        _owedChanges.AnyMayStillBeWrittenLate
        && (_owedChanges.MayStillBeWrittenLate(KeyFor(entry.Path)) || (entry.ObjectKey is { } key && _owedChanges.MayStillBeWrittenLate(key)));

    private void MarkDirty(FileEntry entry, LocalFile local) => _life.Apply(entry, ApplyChange(entry, local));

    private static GeoDriveException ChangedSinceUpload(string path) => new(
        ErrorIds.FileNotUploaded, ErrorKind.InvalidOperation,
        $"'{path}' changed since its last upload, so it was not stubbed; it is Dirty again and will be uploaded.",
        "Run Invoke-ForceUpload for it, then stub it.");
}
