using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;
using GeoDrive.Policies.Evaluation;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Brings the index and the cache back into agreement when a drive starts, after a clean stop or a crash
/// (docs/architecture.md, "Recovery at start"): interrupted uploads are Dirty again and Dirty files are tried at once, interrupted recalls are clean stubs
/// again, files changed or created while nobody watched are Dirty, a marked file the index does not know is a
/// stub (never data), bytes written into a stub are kept beside it, and entries of files that are gone are
/// dropped. It works on the index, the cache folder and the bucket journal only: a drive recovers with its
/// endpoint down, and what the bucket owes (copies, deletes) is journaled for the tick.
/// </summary>
/// <param name="applyChange">The drive's rule for new local bytes (Dirty, or Excluded under a name kept local).</param>
/// <param name="conflictPathFor">A free conflict name beside a path.</param>
/// <param name="record">Records a drive event.</param>
internal sealed class CacheRecovery(
    DriveEngineOptions options,
    IFileIndex index,
    FileLife life,
    OwedBucketChanges owed,
    RenamedKeys renamed,
    Func<PolicyEvaluator> policy,
    IClock clock,
    Func<FileEntry, LocalFile, FileChange> applyChange,
    Func<string, string> conflictPathFor,
    Action<DriveEventKind, string?, string, string?> record)
{
    /// <summary>One pass over the index, then over the cache folder; what it found and repaired.</summary>
    public RecoveryReport Run(CancellationToken cancellationToken = default)
    {
        var report = new RecoveryReport();

        var copiesOwed = new List<(string From, string To)>();
        var vanishedStubs = new List<FileEntry>();
        foreach (var entry in index.All().ToList())
        {
            cancellationToken.ThrowIfCancellationRequested();
            var localPath = LocalPath(entry.Path);
            var local = LocalFile.Read(localPath);
            if (local is null)
            {
                // Gone from the cache while the service was down: forget it, keep its object (never guess a delete).
                if (entry.State is FileState.Stubbed or FileState.Recalling or FileState.Cached && entry.ObjectKey is not null)
                {
                    // Or renamed on disk before the index heard of it: its marked file elsewhere is matched below (a Cached
                    // one's only while its recall's mark was still on: ADR 0031).
                    vanishedStubs.Add(entry);
                }
                life.Forget(entry.Path);
                report.Forgotten++;
                continue;
            }
            var excluded = policy().IsExcluded(entry.Path, isDirectory: false);
            if (entry.ObjectKey is { } recordedKey && !ObjectLayout.IsOwnKey(options.Prefix, recordedKey, entry.Path, options.CaseInsensitive))
            {
                // Renamed away from that key, whose bytes it still needs: never synced down as a new file.
                renamed.Left(recordedKey, entry.ETag);
                if (entry.State is FileState.Cached && excluded)
                {
                    // Renamed clean to a name kept local (a crash before the rename was looked at): its bytes are
                    // here, so it is Excluded and its old object goes, as the rename would have done.
                    owed.OweDeletes([recordedKey]);
                    entry.ObjectKey = null;
                    life.Apply(entry, applyChange(entry, local.Value));
                    report.ChangedFound++;
                    continue;
                }
                if (entry.State is FileState.Cached && !excluded)
                {
                    // Its bytes in the bucket are still under that key: an upload to the key brings them home first (as for
                    // a stub, tracked below). Not tracked, an upload of a new file under the old name replaced them (soak
                    // seed 1058385569).
                    renamed.Track(entry);
                }
                if (entry.State is FileState.Cached or FileState.Stubbed or FileState.Recalling && !excluded && !owed.IsCopyOwedTo(KeyFor(entry.Path)))
                {
                    // Renamed clean, its copy not journaled (a crash between the index's rename and the journal): owed now.
                    // Never to a name kept local: a stub there comes home from its old key (below) and nothing goes up.
                    copiesOwed.Add((recordedKey, KeyFor(entry.Path)));
                }
            }
            if (entry.State is FileState.Dirty or FileState.Uploading)
            {
                // Its PUT may have been out when the run died (Uploading is written lazily: Dirty says as much).
                owed.MayBeWrittenLate(KeyFor(entry.Path));
            }
            switch (entry.State)
            {
                case FileState.Uploading:
                    entry.DirtySinceUtc ??= clock.UtcNow;
                    // Cut short by the crash, and tried at once as a Dirty file is (below): the backoff kept is the try's before.
                    entry.NextAttemptUtc = null;
                    life.Apply(entry, FileChange.Interrupted);
                    report.UploadsResumed++;
                    break;
                case FileState.Recalling:
                case FileState.Stubbed:
                    if (excluded)
                    {
                        renamed.BringHome(entry.Path);
                    }
                    var stubKey = entry.ObjectKey ?? KeyFor(entry.Path);
                    var mark = StubMark.Read(localPath);
                    if (mark is null && !excluded && RecallFinishedOnDisk(entry, stubKey, localPath, local.Value))
                    {
                        // A recall whose bytes were fsynced and whose mark went, but whose Cached the crash lost: verified, it stands.
                        if (entry.State == FileState.Stubbed)
                        {
                            life.Apply(entry, FileChange.RecallStarted, deferred: true);
                        }
                        entry.LastAccessUtc = clock.UtcNow;
                        life.Apply(entry, FileChange.Recalled);
                        report.RecallsKept++;
                        break;
                    }
                    if (entry.State == FileState.Recalling || mark is { Recalling: true })
                    {
                        // An interrupted recall (the index may not have heard of it: its mark says so): its partial bytes
                        // came from the bucket and go again.
                        if (!ThroughLink(entry.Path))
                        {
                            LocalFile.MakeStub(options.CachePath, localPath, entry.Size, entry.ModifiedUtc, MarkFor(entry, stubKey));
                        }
                        if (entry.State == FileState.Recalling)
                        {
                            life.Apply(entry, FileChange.RecallFailed);
                        }
                        report.StubsRepaired++;
                    }
                    else if (mark is not null && Retimed(localPath, mark, local.Value) is { } retimed)
                    {
                        // Only its time moved: the entry takes it too.
                        entry.ModifiedUtc = retimed.ModifiedUtc;
                        life.Save(entry);
                        report.StubsRepaired++;
                    }
                    else if (mark is not null ? !mark.IsPlaceholder(local.Value) : local.Value.Size != entry.Size || local.Value.ModifiedUtc != entry.ModifiedUtc)
                    {
                        // Written into while nobody watched (straight into the cache): those bytes are kept beside it.
                        KeepBytesWrittenIntoStub(entry.Path, MarkFor(entry, stubKey), local.Value);
                        report.ChangedFound++;
                        continue;
                    }
                    else if (mark is null)
                    {
                        // A stub from before stubs were marked (or whose marking a crash cut short): marked now.
                        StubMark.Write(options.CachePath, localPath, MarkFor(entry, stubKey));
                    }
                    renamed.Track(entry);
                    break;
                case FileState.Cached when StubMark.Read(localPath) is { Recalling: true } recalled:
                    // Recorded Cached while its recall's bytes were still to be flushed (ADR 0031): kept only if they are the
                    // object's, else a stub again, never a Cached file of whatever the crash left.
                    KeepOrStubRecalled(entry, recalled, localPath, local.Value, report);
                    break;
                default:
                    if (local.Value.Size != entry.Size || local.Value.ModifiedUtc != entry.ModifiedUtc)
                    {
                        life.Apply(entry, applyChange(entry, local.Value));
                        report.ChangedFound++;
                    }
                    else if (entry.State == FileState.Dirty && entry.NextAttemptUtc is not null)
                    {
                        // Its backoff grew while the last run failed to upload it, most often because the endpoint was
                        // down; which failures were only that is not kept. Tried at once, as the journal's changes are
                        // (a file still refused backs off again from its failed attempts).
                        entry.NextAttemptUtc = null;
                        life.Save(entry);
                    }
                    break;
            }
        }

        owed.OweCopies(copiesOwed);

        foreach (var file in EnumerateCacheFiles())
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (index.Get(file) is not null)
            {
                continue;
            }
            if (DrivePath.IsTooLong(file))
            {
                // Made straight in the cache (never through the mount, which refuses it): the index cannot hold it.
                record(DriveEventKind.Error, file[..Math.Min(file.Length, 200)] + "…", $"A file in the cache was left out: {DrivePath.TooLong(file).Message}", ErrorIds.PathTooLong);
                continue;
            }
            if (LocalFile.Read(LocalPath(file)) is not { } local)
            {
                continue;
            }
            if (StubMark.Read(LocalPath(file)) is { } mark)
            {
                // A stub the index does not know (a lost index, a crash between a rename on disk and in the
                // index): it is a stub, by its own mark, never data to upload over its object.
                if (mark.Recalling)
                {
                    // A recall cut short (the index lost or never heard of it): the stub again, never bytes written into one.
                    mark = mark with { Recalling = false };
                    LocalFile.MakeStub(options.CachePath, LocalPath(file), mark.Size, mark.ModifiedUtc, mark);
                    local = LocalFile.Read(LocalPath(file)) ?? local;
                }
                mark = Retimed(LocalPath(file), mark, local) ?? mark;
                if (!mark.IsPlaceholder(local))
                {
                    KeepBytesWrittenIntoStub(file, mark, local);
                    report.ChangedFound++;
                    continue;
                }
                var stub = StubFromMark(file, mark);
                if (mark.Key is null && mark.KeyHash != StubMark.HashOf(KeyFor(file))
                    && vanishedStubs.FirstOrDefault(v => StubMark.HashOf(v.ObjectKey!) == mark.KeyHash) is { } was)
                {
                    // The stub of another name, moved here on disk: it stands for that name's object.
                    stub.ObjectKey = was.ObjectKey;
                    stub.Checksum = was.Checksum;
                    stub.Xxh128 = was.Xxh128;
                    stub.ETag = was.ETag;
                    stub.VersionId = was.VersionId;
                    mark = mark with { Key = was.ObjectKey };
                }
                life.Apply(stub, FileChange.FoundAsStub);
                if (mark.Key is { } elsewhere)
                {
                    renamed.Left(elsewhere, stub.ETag);
                    renamed.Track(stub);
                    owed.OweCopies([(elsewhere, KeyFor(file))]);
                }
                report.StubsRepaired++;
                continue;
            }
            // A version a file renamed away from the name left there, as the index still tells: the new file may replace it.
            var entry = new FileEntry { Path = file, LastAccessUtc = clock.UtcNow, ReplacesETag = renamed.LeftVersion(KeyFor(file)) };
            life.Apply(entry, applyChange(entry, local));
            report.NewFound++;
        }
        return report;
    }

    private string LocalPath(string path) => DrivePath.ToLocal(options.CachePath, path);

    private string KeyFor(string path) => ObjectLayout.KeyFor(options.Prefix, path, options.CaseInsensitive);

    private StubMark MarkFor(FileEntry entry, string key) => StubMark.For(entry, key, KeyFor(entry.Path));

    /// <summary>True (with an event) when the file's cache path goes through a link: no stub is written there.</summary>
    private bool ThroughLink(string path)
    {
        try
        {
            CacheLinks.Refuse(options.CachePath, LocalPath(path));
            return false;
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
        {
            record(DriveEventKind.Error, path, ex.Message, ex.ErrorId);
            return true;
        }
    }

    /// <summary>
    /// Whether an unmarked cache file recorded as a stub (or Recalling) holds its recall's bytes: a recall fsyncs them
    /// and removes the mark before it records Cached, without waiting for that record to reach the disk. Only a file
    /// under its own key with its recorded size, time and hash counts; anything else is taken as a stub, as before.
    /// </summary>
    private bool RecallFinishedOnDisk(FileEntry entry, string key, string localPath, LocalFile local)
    {
        if (!StubMark.Supported || entry.Checksum is null || local.Size != entry.Size || local.ModifiedUtc != entry.ModifiedUtc
            || !ObjectLayout.IsOwnKey(options.Prefix, key, entry.Path, options.CaseInsensitive))
        {
            return false;
        }
        try
        {
            using var file = new FileStream(BeneathCache.OpenHandle(options.CachePath, localPath, FileMode.Open, FileAccess.Read), FileAccess.Read, bufferSize: 0);
            if (!SparseData.Holds(file.SafeFileHandle))
            {
                return false;
            }
            // Holds moved the descriptor's offset to the first data.
            file.Seek(0, SeekOrigin.Begin);
            return FileHashes.CheckAsync(file, entry, withMd5: false).GetAwaiter().GetResult().Same;
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
        {
            // Never read through a link: the file is left to the repairs below, as before.
            return false;
        }
    }

    /// <summary>
    /// A Cached file still marked by its recall: the crash came before its bytes were known to be on disk. Holding the
    /// recorded hash, it stays Cached (flushed now, then unmarked); else it is the stub again, and bytes that are not the
    /// placeholder's (written straight into the cache) are kept beside it. The object holds the bytes either way.
    /// </summary>
    private void KeepOrStubRecalled(FileEntry entry, StubMark mark, string localPath, LocalFile local, RecoveryReport report)
    {
        var key = entry.ObjectKey ?? KeyFor(entry.Path);
        if (RecallFinishedOnDisk(entry, key, localPath, local))
        {
            using var handle = BeneathCache.OpenHandle(options.CachePath, localPath, FileMode.Open, FileAccess.Read);
            RandomAccess.FlushToDisk(handle);
            StubMark.Clear(handle);
            report.RecallsKept++;
            return;
        }
        life.Apply(entry, FileChange.Stubbed);
        if (!mark.IsPlaceholder(local))
        {
            KeepBytesWrittenIntoStub(entry.Path, MarkFor(entry, key), local);
            report.ChangedFound++;
            return;
        }
        if (!ThroughLink(entry.Path))
        {
            LocalFile.MakeStub(options.CachePath, localPath, entry.Size, entry.ModifiedUtc, MarkFor(entry, key));
        }
        renamed.Track(entry);
        report.StubsRepaired++;
    }

    private FileEntry StubFromMark(string path, StubMark mark) => new()
    {
        Path = path,
        Size = mark.Size,
        ModifiedUtc = mark.ModifiedUtc,
        LastAccessUtc = clock.UtcNow,
        // Its checksum and version are the object's metadata: the next open asks the bucket (fileSync).
        ObjectKey = mark.Key ?? KeyFor(path),
    };

    /// <summary>
    /// A stub whose time alone differs from its mark's and which holds no byte (a touch whose mark a crash kept from
    /// following, or a touch straight in the cache): never data. Its mark takes the file's time, and is returned; null
    /// when the stub is not such a one.
    /// </summary>
    private StubMark? Retimed(string localPath, StubMark mark, LocalFile local)
    {
        if (mark.IsPlaceholder(local) || local.Size != mark.Size || SparseData.Holds(options.CachePath, localPath))
        {
            return null;
        }
        var retimed = mark with { ModifiedUtc = local.ModifiedUtc };
        StubMark.Write(options.CachePath, localPath, retimed);
        return retimed;
    }

    /// <summary>
    /// A stub whose cache file was written into while the service was down: the file (zeros and the bytes
    /// written) moves to a conflict name as new data, and the name becomes the stub again. Nothing is dropped.
    /// </summary>
    private void KeepBytesWrittenIntoStub(string path, StubMark mark, LocalFile local)
    {
        var conflictPath = conflictPathFor(path);
        var mine = new FileEntry { Path = conflictPath, LastAccessUtc = clock.UtcNow };
        life.Apply(mine, applyChange(mine, local));
        File.Move(LocalPath(path), LocalPath(conflictPath));
        StubMark.Clear(LocalPath(conflictPath));
        var stub = StubFromMark(path, mark);
        life.Apply(stub, FileChange.FoundAsStub);
        LocalFile.CreateStub(options.CachePath, LocalPath(path), stub.Size, stub.ModifiedUtc, local.Mode, mark);
        renamed.Track(stub);
        record(DriveEventKind.Conflict, path,
            $"The stub was written into while the service was down: those bytes were kept as '{conflictPath}', and '{path}' is a stub again.", null);
    }

    private IEnumerable<string> EnumerateCacheFiles()
    {
        var root = Path.GetFullPath(options.CachePath);
        var enumeration = new EnumerationOptions { RecurseSubdirectories = true, AttributesToSkip = 0, IgnoreInaccessible = true, ReturnSpecialDirectories = false };
        foreach (var full in Directory.EnumerateFiles(root, "*", enumeration))
        {
            var relative = Path.GetRelativePath(root, full).Replace('\\', '/');
            if (!DriveEngineOptions.IsInternal(relative))
            {
                yield return relative;
            }
        }
    }
}

/// <summary>What <see cref="DriveEngine.StartAsync"/> found and repaired.</summary>
public sealed class RecoveryReport
{
    public int UploadsResumed { get; set; }
    public int StubsRepaired { get; set; }

    /// <summary>Recalls that had finished on disk (verified by hash) when the crash lost their Cached state.</summary>
    public int RecallsKept { get; set; }

    public int ChangedFound { get; set; }
    public int NewFound { get; set; }
    public int Forgotten { get; set; }

    public override string ToString() =>
        $"{UploadsResumed} uploads resumed, {StubsRepaired} stubs repaired, {RecallsKept} finished recalls kept, {ChangedFound} changed and {NewFound} new files found, {Forgotten} missing forgotten";
}
