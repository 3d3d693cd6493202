using System.Collections.Concurrent;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Jobs;
using GeoDrive.Engine.Layout;
using GeoDrive.Policies.Evaluation;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// One drive's engine. Every state change goes to the index before it is acted on (docs/architecture.md, "A file's life"), so
/// that a crash at any point resumes on restart; time comes from <see cref="IClock"/> and the
/// scheduler is driven by <see cref="TickAsync"/>, which the Service calls on a timer and tests call
/// directly after moving a manual clock.
/// </summary>
public sealed partial class DriveEngine : IAsyncDisposable
{
    private readonly IObjectStore _store;
    private readonly IFileIndex _index;
    // Every change of a file's state goes through it (docs/architecture.md, "A file's life").
    private readonly FileLife _life;
    private readonly IClock _clock;
    private readonly ILogger _logger;
    private readonly PathLocks _locks = new();

    // Paths with at least one open handle (the front end reports the last close). Never stubbed while open.
    private readonly ConcurrentDictionary<string, byte> _open = new(StringComparer.Ordinal);
    // Paths whose delete is journaled and whose entry goes once their lock is free -> deletes under way.
    private readonly KeyCounts _beingDeleted = new();

    // Deletes and multipart aborts owed to the bucket, journaled in the index (OwedBucketChanges).
    private readonly OwedBucketChanges _owedChanges;

    // Keys renamed away from, keys a renamed stub still needs, stubs renamed to a name kept local.
    private readonly RenamedKeys _renamed;

    private volatile PolicyEvaluator _policy;

    public DriveEngine(DriveEngineOptions options, IObjectStore store, IFileIndex index, PolicyEvaluator policy, IClock clock, ILogger? logger = null)
    {
        Options = options;
        LocalStubs = new SparseFileStubs(options.CachePath);
        _store = store;
        _index = index;
        _life = new FileLife(index);
        _policy = policy;
        _clock = clock;
        _logger = logger ?? NullLogger.Instance;
        _renamed = new RenamedKeys(index.Get, KeyFor);
        _owedChanges = new OwedBucketChanges(index as IBucketJournal ?? new InMemoryBucketJournal(), clock, options.MaxRetryDelay);
        PolicyLoadedUtc = clock.UtcNow;
        _recallJobs = new RecallJobScheduler(
            new RecallJobDrive(options.Name, () => _policy, () => _index.FindByState(FileState.Stubbed), (path, ct) => RecallAsync(path, ct), Record, options.TimeZone),
            index as IRecallJobStore ?? new InMemoryRecallJobStore(), clock, _logger);
        _recallJobs.NoticePolicy();
        _uploads = new UploadPipeline(options.Name, options, UploadAsync, path => _index.Get(path),
            batch => _index.FindByState(FileState.Dirty, batch), _open.ContainsKey, () => _policy.Settle, () => UploadsSuspended,
            _owedChanges.EndpointAnswered, clock, _logger);
        Recalls = new Recaller(options.Name, options.CachePath, store, () => _policy.Policy.MultipartRestoreThreads.Value,
            destination => DownloadThrottled ? new ThrottledStream(destination, DownloadThrottle) : destination, _logger);
        _sync = new BucketSync(options, store, index, _life, _locks, _renamed, _owedChanges, () => _policy, clock, Recalls.IsRecalling, _open.ContainsKey,
            path => LocalCopyReplaced?.Invoke(path), Record, _logger);
        _accessWaits = new AccessWaitStubbing(() => _policy, () => _index.FindByState(FileState.Cached), _open.ContainsKey, StubAsync, Record, clock, options.TickBatchSize);
        _thresholds = new CacheThresholds(options.CacheVolume ?? new FolderVolume(options.CachePath), () => _policy,
            () => _index.FindByState(FileState.Cached), _open.ContainsKey, StubAsync, Record);
    }

    // The recalls in flight and their bytes; the file's life around them is DriveEngine.Recall's, under its lock.
    private Recaller Recalls { get; }

    // The bucket side of the front-end contract: folder sync, lookups of missing names, fileSync at open.
    private readonly BucketSync _sync;

    /// <summary>True while the bucket did not answer a check (a probe lets checks through again once it answers).</summary>
    public bool BucketSilent => _sync.Silent;

    // Stubbing by access wait: a scan when a Cached file can be due.
    private readonly AccessWaitStubbing _accessWaits;

    // cacheThresholds: stubbing least recently used files while the cache volume is over its threshold.
    private readonly CacheThresholds _thresholds;

    // The upload pipeline: settled Dirty files queued and uploaded by a few long-lived workers.
    private readonly UploadPipeline _uploads;

    /// <summary>Files waiting in the upload queue (not yet taken by a worker).</summary>
    public int UploadQueueLength => _uploads.QueueLength;

    /// <summary>Paths that hold a slot in the pipeline: queued or being uploaded (tests check no path is there twice).</summary>
    public IReadOnlyCollection<string> PathsInUploadPipeline => _uploads.Paths;

    /// <summary>Returns once no file is queued or uploading (what was queued meanwhile included).</summary>
    public Task WhenUploadsIdleAsync(CancellationToken cancellationToken = default) => _uploads.WhenIdleAsync(cancellationToken);

    /// <summary>Stops the upload workers: queued files stay Dirty in the index, uploads in flight are cancelled and go again at the next start.</summary>
    public ValueTask DisposeAsync() => _uploads.DisposeAsync();

    // Scheduled recall jobs (Register-CloudRecallJob, the policy's recallJobs): their own collaborator.
    private readonly RecallJobScheduler _recallJobs;

    /// <summary>The recall job runner of the moment (completed when no job runs): tests await it after a tick.</summary>
    public Task RecallJobsIdle => _recallJobs.Idle;

    /// <summary>Every recall job of the drive (the policy's and the registered ones), by name.</summary>
    public IReadOnlyList<RecallJobView> RecallJobs() => _recallJobs.List();

    /// <summary>Register-CloudRecallJob: a new job whose first run is its first cron slot from now.</summary>
    public RecallJobView RegisterRecallJob(RecallJobSpec spec) => _recallJobs.Register(spec);

    /// <summary>Unregister-CloudRecallJob. A policy's job is refused: the policy file is where it lives.</summary>
    public void UnregisterRecallJob(string name) => _recallJobs.Unregister(name);

    /// <summary>Stops a running recall job (recorded as Interrupted, run again at the next start) and waits for it.</summary>
    public Task StopRecallJobsAsync() => _recallJobs.StopAsync();

    public DriveEngineOptions Options { get; }

    public string Name => Options.Name;

    public PolicyEvaluator Policy => _policy;

    // spec.throttle: one limit per direction for all the drive's transfers; the window in force is
    // chosen by the engine's clock in the machine's local time, as administrators write schedules.
    private Throttle UploadThrottle => _uploadThrottle ??= new Throttle(() => _policy.ThrottleAt(LocalNow()).Upload);
    private Throttle DownloadThrottle => _downloadThrottle ??= new Throttle(() => _policy.ThrottleAt(LocalNow()).Download);
    private Throttle? _uploadThrottle;
    private Throttle? _downloadThrottle;

    private bool UploadThrottled => _policy.ThrottleAt(LocalNow()).Upload > 0;

    private bool DownloadThrottled => _policy.ThrottleAt(LocalNow()).Download > 0;

    private DateTime LocalNow() => TimeZoneInfo.ConvertTime(_clock.UtcNow, Options.TimeZone ?? TimeZoneInfo.Local).DateTime;

    /// <summary>Transfer totals, bytes in flight and rates (Get-CloudDriveStatus).</summary>
    public TransferMeter Transfers { get; } = new();

    /// <summary>Suspend-CloudDrive: the scheduler uploads nothing until resumed (changes keep collecting as Dirty; an explicit Invoke-ForceUpload still goes).</summary>
    public bool UploadsSuspended { get; set; }

    /// <summary>When the policy in force was handed to the engine (Get-CloudPolicy shows it).</summary>
    public DateTimeOffset PolicyLoadedUtc { get; private set; }
    /// <summary>
    /// How stubs are made locally: sparse files by default (Linux, FUSE); the Windows front end sets
    /// its dehydration (ProjFsMount) when it starts virtualizing the cache.
    /// </summary>
    public ILocalStubs LocalStubs { get; set; }

    /// <summary>Replaces the policy in force (hot reload); the next decisions use it.</summary>
    public void UpdatePolicy(PolicyEvaluator policy)
    {
        _policy = policy;
        PolicyLoadedUtc = _clock.UtcNow;
        // Access waits, pins or the minimum size may have changed: every Cached file is looked at again.
        _accessWaits.NeededBy(DateTimeOffset.MinValue);
        _recallJobs.NoticePolicy();
    }

    /// <summary>
    /// Brings the index and the cache back into agreement after a start or a crash (<see cref="CacheRecovery"/>);
    /// call once, before the front end serves the drive and before the first tick.
    /// </summary>
    public Task<RecoveryReport> StartAsync(CancellationToken cancellationToken = default)
    {
        OwnerOnly.Folder(Options.InternalPath);
        var recovery = new CacheRecovery(Options, _index, _life, _owedChanges, _renamed, () => _policy, _clock, ApplyChange, ConflictPathFor, Record);
        var report = recovery.Run(cancellationToken);
        Record(DriveEventKind.Service, null, $"Drive started: {report}.");
        return Task.FromResult(report);
    }

    /// <summary>Puts a policy event (reloaded, refused) in the drive's event log, beside the file events it explains.</summary>
    public void RecordPolicyEvent(string message, string? errorId = null) => Record(DriveEventKind.Policy, null, message, errorId);

    public FileEntry? GetFile(string path) => _index.Get(DrivePath.Normalize(path));

    /// <summary>Index entries whose path matches a wildcard pattern (see <see cref="FileQuery"/>).</summary>
    public IEnumerable<FileEntry> FindFiles(string pattern, bool literal = false)
    {
        if (literal || !FileQuery.HasWildcards(pattern))
        {
            return _index.Get(DrivePath.Normalize(pattern.Replace('\\', '/'))) is { } entry ? [entry] : [];
        }
        var query = new FileQuery(pattern);
        return _index.All().Where(e => query.Matches(e.Path));
    }

    public IReadOnlyDictionary<FileState, long> CountByState() => _index.CountByState();

    public IReadOnlyList<DriveEvent> ReadEvents(DateTimeOffset? sinceUtc = null, DriveEventKind? kind = null, int limit = 1000) =>
        _index.ReadEvents(sinceUtc, kind, limit);

    /// <summary>
    /// One pass of the scheduler: uploads Dirty files whose settle delay has passed, stubs Cached files
    /// whose access wait has passed and, while the cache volume is over its threshold, the least
    /// recently used ones; removes objects of deleted files; and starts a recall job that is due (in the background).
    /// </summary>
    public async Task<TickResult> TickAsync(CancellationToken cancellationToken = default)
    {
        _recallJobs.StartDue();
        var (uploaded, failed) = await _uploads.TickAsync(cancellationToken);
        var stubbed = await _accessWaits.StubDueAsync(cancellationToken);
        stubbed += await _thresholds.StubAsync(cancellationToken);
        await BringStubsHomeAsync(cancellationToken);
        var deleted = await SettleOwedChangesAsync(cancellationToken);
        return new TickResult(uploaded, failed, stubbed, deleted);
    }

    private string LocalPath(string path) => DrivePath.ToLocal(Options.CachePath, path);

    /// <summary>True (with an event) when the file's cache path goes through a link: nothing may be written there.</summary>
    private bool ThroughLink(string path)
    {
        try
        {
            DataPath(path);
            return false;
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
        {
            Record(DriveEventKind.Error, path, ex.Message, ex.ErrorId);
            return true;
        }
    }

    /// <summary>The cache path of a file whose bytes the engine is about to make, read or write: refused (PlantedLink) through a link.</summary>
    private string DataPath(string path) => CacheLinks.DataPath(Options.CachePath, path);

    private string KeyFor(string path) => ObjectLayout.KeyFor(Options.Prefix, path);

    /// <summary>
    /// Each event as it is recorded (after it is in the index), for the host's own outlets such as the
    /// Windows Event Log. Called on the recording thread: a handler must be quick and must not throw.
    /// </summary>
    public event Action<DriveEvent>? EventRecorded;

    private void Record(DriveEventKind kind, string? path, string message, string? errorId = null)
    {
        var driveEvent = new DriveEvent { TimeUtc = _clock.UtcNow, Kind = kind, Path = path, Message = message, ErrorId = errorId };
        _index.AppendEvent(driveEvent);
        EventRecorded?.Invoke(driveEvent);
        if (errorId is null)
        {
            _logger.LogInformation("{Drive}: {Kind} {Path}: {Message}", Name, kind, path, message);
        }
        else
        {
            _logger.LogWarning("{Drive}: {Kind} {Path}: {Message} ({ErrorId})", Name, kind, path, message, errorId);
        }
    }

    private async Task BringStubsHomeAsync(CancellationToken cancellationToken)
    {
        foreach (var path in _renamed.ComingHome)
        {
            try
            {
                var entry = await RecallAsync(path, cancellationToken);
                if (entry.State != FileState.Stubbed)
                {
                    _renamed.CameHome(path);
                }
            }
            catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.FileNotFound)
            {
                // Renamed on or deleted meanwhile: its new name decides.
                _renamed.CameHome(path);
            }
            catch (GeoDriveException ex)
            {
                // Tried again at the next tick; the stub keeps its bytes under the old key meanwhile.
                _logger.LogInformation("{Drive}: '{Path}' (renamed to an excluded name) not recalled yet: {Message}", Name, path, ex.Message);
            }
        }
    }

    /// <summary>Changes owed to the bucket (its journal) that are due: deletes of old keys, aborts of multipart uploads left open.</summary>
    public int OwedBucketChangeCount => _owedChanges.Count;

    private async Task<int> SettleOwedChangesAsync(CancellationToken cancellationToken)
    {
        var deleted = 0;
        // A settled copy owes its old key's delete: a second pass takes it in the same tick.
        for (var pass = 0; pass < 2; pass++)
        {
            deleted += await SettleDueChangesAsync(cancellationToken);
        }
        return deleted;
    }

    private async Task<int> SettleDueChangesAsync(CancellationToken cancellationToken)
    {
        var deleted = 0;
        foreach (var change in _owedChanges.Due(Options.TickBatchSize))
        {
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
                else if (await DeleteOwedObjectAsync(change, cancellationToken))
                {
                    deleted++;
                }
                // The endpoint answered: changes that waited only for it are due (the second pass takes them).
                _owedChanges.EndpointAnswered();
            }
            catch (GeoDriveException ex)
            {
                // Still owed: tried again with backoff (or once the endpoint answers again), and after a restart; an orphan costs space, never data.
                _owedChanges.Failed(change, ex.Message, ex.ErrorId == ErrorIds.EndpointUnreachable);
                Record(DriveEventKind.Error, change.Key, change.Kind switch
                {
                    BucketChangeKind.DeleteObject => $"Could not delete the object of a deleted or renamed file; will retry: {ex.Message}",
                    BucketChangeKind.CopyObject => $"Could not copy a renamed file's object from '{change.SourceKey}'; will retry: {ex.Message}",
                    _ => $"Could not abort an interrupted multipart upload; will retry: {ex.Message}",
                }, ex.ErrorId);
            }
        }
        return deleted;
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
        if (_owedChanges.IsMultipartInFlight(change.Key))
        {
            return;
        }
        if (change.UploadId is { } recorded)
        {
            // Journaled by an earlier version, after the start: its id is known.
            await _store.AbortMultipartUploadAsync(change.Key, recorded, cancellationToken);
        }
        foreach (var open in await _store.ListMultipartUploadsAsync(change.Key, cancellationToken))
        {
            if (!_owedChanges.IsUploadLive(open.UploadId))
            {
                await _store.AbortMultipartUploadAsync(change.Key, open.UploadId, cancellationToken);
            }
        }
        _owedChanges.Done(change);
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
        using (path is null ? null : await _uploadLocks.AcquireAsync(path, cancellationToken))
        using (path is null ? null : await _locks.AcquireAsync(path, cancellationToken))
        {
            if (!MayDeleteNow(change))
            {
                return false;
            }
            await _store.DeleteAsync(key, cancellationToken);
            _owedChanges.Done(change);
            _renamed.Forget(key);
            return true;
        }
    }

    /// <summary>False when the delete is no longer owed (it is then done) or must wait (it stays owed, due at the next tick).</summary>
    private bool MayDeleteNow(BucketChange change)
    {
        if (OwnPathOf(change.Key) is { } path && _index.Get(path) is not null)
        {
            if (_beingDeleted.Contains(path))
            {
                // The entry seen is the deleted file's own, about to be forgotten (its delete waits for the lock):
                // no file lives under the key again, the delete waits for the next tick.
                return false;
            }
            _owedChanges.Done(change);
            _renamed.Forget(change.Key);
            return false;
        }
        return !_renamed.IsStillNeeded(change.Key) && !_owedChanges.IsCopySource(change.Key);
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
            _owedChanges.Done(change);
            return;
        }
        using (await _uploadLocks.AcquireAsync(path, cancellationToken))
        {
            FileEntry entry;
            Dictionary<string, string>? metadata = null;
            using (await _locks.AcquireAsync(path, cancellationToken))
            {
                if (_index.Get(path) is not { State: FileState.Cached or FileState.Stubbed } current || current.ObjectKey != from)
                {
                    if (_index.Get(path)?.ObjectKey == change.Key)
                    {
                        // Copied and recorded before a crash: only the old key's delete may be missing.
                        _owedChanges.OweDeletes([from]);
                    }
                    else if (_index.Get(path) is null && change.Attempts > 0)
                    {
                        // Moved on or deleted after a try whose answer may have been lost: the server may have made the
                        // copy all the same, and no file lives under its key to own it. (A file there uploads over it.)
                        _owedChanges.OweDeletes([change.Key]);
                    }
                    // Otherwise changed (its upload deletes the old key once verified), deleted or moved on.
                    _owedChanges.Done(change);
                    return;
                }
                entry = current;
                if (entry.Checksum is { } sha256)
                {
                    // The new path's own metadata (its policy tags may differ); a foreign object keeps its own.
                    var mode = LocalFile.Read(LocalPath(path))?.Mode ?? UnixFileMode.UserRead | UnixFileMode.UserWrite;
                    metadata = ObjectLayout.MetadataFor(sha256, entry.Size, entry.ModifiedUtc, mode);
                    metadata[ObjectLayout.SiteKey] = SiteId;
                    ObjectLayout.AddTags(metadata, _policy.TagsFor(path), path, entry.ModifiedUtc);
                    ObjectLayout.AddObjectTags(metadata, _policy.ObjectTagsFor(path), path, entry.ModifiedUtc);
                }
            }
            ObjectInfo copied;
            try
            {
                var multipart = new JournaledMultipart(_owedChanges, change.Key, static () => true);
                copied = await _store.CopyAsync(from, change.Key, new ObjectVersion(entry.ETag, entry.VersionId), metadata, multipart, cancellationToken);
            }
            catch (GeoDriveException ex) when (ex.ErrorId is ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound)
            {
                _owedChanges.Done(change);
                await CopyFailedAsync(path, from, ex, cancellationToken);
                return;
            }
            using (await _locks.AcquireAsync(path, cancellationToken))
            {
                var now = _index.Get(path);
                if (now is null || now.Generation != entry.Generation || now.ObjectKey != from
                    || copied.Size != entry.Size || (entry.Checksum is { } sha && ObjectLayout.RecordedChecksum(copied) != sha))
                {
                    // Deleted or changed during the copy (its own upload or delete covers the keys), or a copy
                    // that does not hold the bytes: the new key's object is not this file's; tried as a delete.
                    _owedChanges.OweDeletes([change.Key]);
                    _owedChanges.Done(change);
                    return;
                }
                now.ObjectKey = change.Key;
                now.ETag = copied.ETag;
                now.VersionId = copied.VersionId;
                _life.Save(now);
                _renamed.Release(from, path);
            }
            // After the entry names the new key (a crash between leaves an old copy, never the only one).
            _owedChanges.OweDeletes([from]);
            _owedChanges.Done(change);
        }
    }

    /// <summary>The old object is gone or replaced: a Cached file uploads its own bytes; a stub keeps its stale record and says so.</summary>
    private async Task CopyFailedAsync(string path, string from, GeoDriveException error, CancellationToken cancellationToken)
    {
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            if (_index.Get(path) is { State: FileState.Cached } cached && cached.ObjectKey == from && LocalFile.Read(LocalPath(path)) is { } local)
            {
                _life.Apply(cached, ApplyChange(cached, local));
                _uploads.QueueIfDue(cached);
                return;
            }
        }
        Record(DriveEventKind.Error, path, $"The renamed file's object could not be copied to its new name: {error.Message}", error.ErrorId);
    }

    /// <summary>The drive path a key of this drive's prefix names, or null for a key that names none.</summary>
    private string? OwnPathOf(string key)
    {
        if (!key.StartsWith(Options.Prefix, StringComparison.Ordinal))
        {
            return null;
        }
        try
        {
            return DrivePath.FromObjectKey(key, Options.Prefix);
        }
        catch (GeoDriveException)
        {
            return null;
        }
    }


    /// <summary>Before <paramref name="key"/> is overwritten: a renamed stub whose bytes still live there comes home first.</summary>
    private async Task RescueDisplacedStubAsync(string key, string uploadingPath, CancellationToken cancellationToken)
    {
        if (_renamed.HolderOf(key) is not { } stubPath || stubPath == uploadingPath)
        {
            return;
        }
        using (await _locks.AcquireAsync(stubPath, cancellationToken))
        {
            if (_index.Get(stubPath) is { } stub && stub.ObjectKey == key)
            {
                stub = await RecallLockedAsync(stub, cancellationToken);
                if (Files.LocalFile.Read(LocalPath(stubPath)) is { } local)
                {
                    _life.Apply(stub, ApplyChange(stub, local));
                }
            }
            _renamed.Release(key);
        }
    }

    private static GeoDriveException NotFound(string path) => new(
        ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
        $"The drive has no file '{path}'.",
        "Check the path with Get-CloudFile; paths are relative to the drive root.");
}
