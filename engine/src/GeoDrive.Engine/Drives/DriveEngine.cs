using System.Collections.Concurrent;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Jobs;
using GeoDrive.Engine.Layout;
using GeoDrive.Engine.Metrics;
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
    // Checksums the front end took of files as they were written, for their uploads (docs/decisions/0032-hashed-as-written.md).
    private readonly WrittenDigests _written = new();
    // Paths whose delete is journaled and whose entry goes once their lock is free -> deletes under way.
    private readonly KeyCounts _beingDeleted = new();

    // Deletes and multipart aborts owed to the bucket, journaled in the index (OwedBucketChanges).
    private readonly OwedBucketChanges _owedChanges;

    // Keys renamed away from, keys a renamed stub still needs, stubs renamed to a name kept local.
    private readonly RenamedKeys _renamed;

    private volatile PolicyEvaluator _policy;

    // Upload workers wanted: the options' count at start, transfer.uploadThreads from each policy reload on.
    private volatile int _uploadThreads;

    public DriveEngine(DriveEngineOptions options, IObjectStore store, IFileIndex index, PolicyEvaluator policy, IClock clock, ILogger? logger = null)
    {
        Options = options;
        LocalStubs = new SparseFileStubs(options.CachePath);
        _store = store;
        _index = index;
        // A rewrite of the entry as it is, durable: it takes every deferred write before it to the disk.
        _recallFlushes = new RecallFlushes(_locks, RecallFlushFailed, path =>
        {
            if (_index.Get(path) is { } recalled)
            {
                _index.Put(recalled);
            }
        });
        _life = new FileLife(index, path => _recallFlushes.SettleLocked(path));
        _policy = policy;
        _uploadThreads = options.UploadConcurrency;
        _clock = clock;
        _logger = logger ?? NullLogger.Instance;
        _renamed = new RenamedKeys(index.Get, KeyFor);
        _owedChanges = new OwedBucketChanges(index as IBucketJournal ?? new InMemoryBucketJournal(), clock, options.MaxRetryDelay, options.LateWriteGrace, _renamed.LeftVersion);
        PolicyLoadedUtc = clock.UtcNow;
        _recallJobs = new RecallJobScheduler(
            new RecallJobDrive(options.Name, () => _policy, () => _index.FindByState(FileState.Stubbed), (path, ct) => RecallAsync(path, ct), Record, options.TimeZone),
            index as IRecallJobStore ?? new InMemoryRecallJobStore(), clock, _logger);
        _recallJobs.NoticePolicy();
        _uploads = new UploadPipeline(options.Name, options, UploadAsync, path => _index.Get(path),
            batch => _index.FindByState(FileState.Dirty, batch), _open.ContainsKey, () => _policy.Settle, () => UploadsSuspended,
            _owedChanges.EndpointAnswered, clock, _logger, () => _uploadThreads);
        Recalls = new Recaller(options.Name, options.CachePath, store, () => _policy.Policy.MultipartRestoreThreads.Value,
            destination => DownloadThrottled ? new ThrottledStream(destination, DownloadThrottle) : destination, _logger);
        _sync = new BucketSync(options, store, index, _life, _locks, _renamed, _owedChanges, () => _policy, clock, () => SiteId, Recalls.IsRecalling, _open.ContainsKey,
            path => LocalCopyReplaced?.Invoke(path), Record, _logger);
        _settler = new OwedChangeSettler(options, store, index, _life, _locks, _uploadLocks, _beingDeleted, _renamed, _owedChanges, () => _policy, () => SiteId,
            CopyFailedAsync, RenamedOntoTakenNameAsync, RescueDisplacedStubAsync, () => _uploads.EndpointAnswered(), _sync.UploadAgainOverLateWriteLocked, Record, ChangeMade);
        _unguarded = new UnguardedUploads(store, WriteProbeKey, (message, remedy) => Record(DriveEventKind.Error, null, $"{message} {remedy}", ErrorIds.UploadsUnguarded));
        _accessWaits = new AccessWaitStubbing(() => _policy, visit => _index.VisitByState(FileState.Cached, visit), StubWaits, StubAsync, Record, clock, options.TickBatchSize);
        _thresholds = new CacheThresholds(options.CacheVolume ?? new FolderVolume(options.CachePath), () => _policy,
            visit => _index.VisitByState(FileState.Cached, visit), StubWaits, StubAsync, Record);
        // Last: a collection may read the drive as soon as it is tracked.
        Metrics = (options.Meter ?? EngineMeter.Shared).Track(this);
    }

    /// <summary>The drive on the engine's meter (docs/metrics.md): errors, durations and throttle waits as they happen.</summary>
    public DriveMetrics Metrics { get; }

    /// <summary>The store's endpoints as they stand (none when the store does not say).</summary>
    public IReadOnlyList<EndpointHealth> EndpointHealth() => _store is IEndpointHealth health ? health.EndpointHealth() : [];

    // The recalls in flight and their bytes; the file's life around them is DriveEngine.Recall's, under its lock.
    private Recaller Recalls { get; }

    // The bucket side of the front-end contract: folder sync, lookups of missing names, fileSync at open.
    private readonly BucketSync _sync;

    /// <summary>True while the bucket did not answer a check (a probe lets checks through again once it answers).</summary>
    public bool BucketSilent => _sync.Silent;

    // Pays what the journal owes at each tick: deletes, copies of renamed files, sweeps of multipart uploads.
    private readonly OwedChangeSettler _settler;

    // Told once when nothing keeps an upload from replacing another site's version unseen (no conditional writes, no versions).
    private readonly UnguardedUploads _unguarded;

    // Stubbing by access wait: a scan when a Cached file can be due.
    private readonly AccessWaitStubbing _accessWaits;
    // Set at start while files are held back from stubbing for the late-write grace (StubWaits): the first tick after it scans.
    private bool _stubScanWhenLateWritesLanded;

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
    public async ValueTask DisposeAsync()
    {
        Metrics.Dispose();
        await _uploads.DisposeAsync();
        await _recallFlushes.DisposeAsync();
    }

    // Recalled files answered before their bytes were flushed: flushed in the background, settled before any change.
    private readonly RecallFlushes _recallFlushes;

    /// <summary>Tests: the recalled files whose flush is still to come.</summary>
    internal RecallFlushes RecallFlushes => _recallFlushes;

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
    private Throttle UploadThrottle => _uploadThrottle ??= new Throttle(() => _policy.ThrottleAt(LocalNow()).Upload, wait => Metrics.ThrottleWaited("upload", wait));
    private Throttle DownloadThrottle => _downloadThrottle ??= new Throttle(() => _policy.ThrottleAt(LocalNow()).Download, wait => Metrics.ThrottleWaited("download", wait));
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
        // Transfer threads as saved: more upload workers now (fewer once their files are done), recalls waiting let in.
        _uploadThreads = policy.Policy.UploadThreads.Value;
        _uploads.Resize();
        _restoreSlots?.Admit();
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
        // Files held back from stubbing until the earlier run's late writes have landed (StubWaits) are looked at then.
        _stubScanWhenLateWritesLanded = _owedChanges.AnyMayStillBeWrittenLate;
        Record(DriveEventKind.Service, null, $"Drive started: {report}.");
        return Task.FromResult(report);
    }

    /// <summary>Puts a policy event (reloaded, refused) in the drive's event log, beside the file events it explains.</summary>
    public void RecordPolicyEvent(string message, string? errorId = null) => Record(DriveEventKind.Policy, null, message, errorId);

    /// <summary>Puts an event of the host's (a peer's notice refused, a peer down) in the drive's event log.</summary>
    public void RecordEvent(DriveEventKind kind, string? path, string message, string? errorId = null) => Record(kind, path, message, errorId);

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
        if (_stubScanWhenLateWritesLanded && _clock.UtcNow >= _owedChanges.LateWritesLandedUtc)
        {
            _stubScanWhenLateWritesLanded = false;
            _accessWaits.NeededBy(DateTimeOffset.MinValue);
        }
        var stubbed = await _accessWaits.StubDueAsync(cancellationToken);
        stubbed += await _thresholds.StubAsync(cancellationToken);
        await BringStubsHomeAsync(cancellationToken);
        var deleted = await _settler.SettleAsync(cancellationToken);
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

    private string KeyFor(string path) => ObjectLayout.KeyFor(Options.Prefix, path, Options.CaseInsensitive);

    /// <summary>
    /// Each event as it is recorded (after it is in the index), for the host's own outlets such as the
    /// Windows Event Log. Called on the recording thread: a handler must be quick and must not throw.
    /// </summary>
    public event Action<DriveEvent>? EventRecorded;

    /// <summary>
    /// Each change this drive made in its bucket, once it is done: an upload verified, a delete made, a rename's copy
    /// recorded (the host tells the drive's peers). Called on the engine's thread: a handler must be quick and must not throw.
    /// </summary>
    public event Action<BucketChangeMade>? BucketChangeMade;

    private void ChangeMade(BucketChangeMade change)
    {
        _sync.Made(change);
        BucketChangeMade?.Invoke(change);
    }

    private void Record(DriveEventKind kind, string? path, string message, string? errorId = null)
    {
        var driveEvent = new DriveEvent { TimeUtc = _clock.UtcNow, Kind = kind, Path = path, Message = message, ErrorId = errorId };
        _index.AppendEvent(driveEvent);
        EventRecorded?.Invoke(driveEvent);
        if (driveEvent.IsRoutine)
        {
            if (_logger.IsEnabled(LogLevel.Debug))
            {
                _logger.LogDebug("{Drive}: {Kind} {Path}: {Message}", Name, kind, path, message);
            }
        }
        else if (errorId is null)
        {
            _logger.LogInformation("{Drive}: {Kind} {Path}: {Message}", Name, kind, path, message);
        }
        else
        {
            Metrics.Error(errorId);
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
            catch (Exception ex) when (ex is GeoDriveException { ErrorId: ErrorIds.FileNotFound } or FileNotFoundException or DirectoryNotFoundException)
            {
                // Renamed on or deleted meanwhile (on disk first: the mount tells the engine after): its new name decides.
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

    /// <summary>
    /// The old object is gone or replaced: a Cached file uploads its own bytes; a stub, whose version no longer exists
    /// anywhere, follows the bucket at its old key as any clean file does (docs/decisions/0042-a-renamed-stub-follows-its-old-keys-change.md).
    /// </summary>
    private async Task CopyFailedAsync(string path, string from, GeoDriveException error, CancellationToken cancellationToken)
    {
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path);
            if (entry is { State: FileState.Cached } cached && cached.ObjectKey == from && LocalFile.Read(LocalPath(path)) is { } local)
            {
                _life.Apply(cached, ApplyChange(cached, local));
                _uploads.QueueIfDue(cached);
                return;
            }
            if (entry is { State: FileState.Stubbed } stub && stub.ObjectKey == from && await StubFollowedItsOldKeyLocked(stub, from, cancellationToken) != Followed.No)
            {
                _owedChanges.OweCopies([(from, KeyFor(path))]);
                return;
            }
        }
        Record(DriveEventKind.Error, path, $"The renamed file's object could not be copied to its new name: {error.Message}", error.ErrorId);
    }

    /// <summary>
    /// A renamed stub's copy found its version replaced or deleted at the old key (another site changed or deleted the file
    /// before this drive heard of it; path lock held). Its version exists nowhere any more, so the stub follows the bucket as
    /// a clean file does: it stands for the newer version, which goes to the new name (the old key keeps it: this drive never
    /// knew it, ADR 0041); or, the object gone, the stub goes as the delete's follower.
    /// No when the bucket could not be asked, or holds the stub's own version there (the failure is then reported and the stub kept).
    /// </summary>
    private async Task<Followed> StubFollowedItsOldKeyLocked(FileEntry stub, string from, CancellationToken cancellationToken)
    {
        ObjectInfo? head;
        try
        {
            head = await _store.HeadAsync(from, cancellationToken);
        }
        catch (GeoDriveException ex)
        {
            _logger.LogWarning("{Drive}: '{Path}' (renamed, its old key's object refused) could not be checked against the bucket: {Message}", Name, stub.Path, ex.Message);
            return Followed.No;
        }
        if (head is null)
        {
            _renamed.Release(from, stub.Path);
            _renamed.Forget(from);
            _renamed.VersionGone(from);
            _sync.RemoveDeletedRemotelyLocked(stub);
            return Followed.Delete;
        }
        if (ObjectLayout.IsSameVersion(stub, head))
        {
            return Followed.No;
        }
        // The version the file left at the old key stays the one it knew: the newer one is another site's, kept there too
        // (ADR 0041), for it may be a file of its own written under that name since.
        _sync.FollowNewerVersionLocked(stub, head, from);
        Record(DriveEventKind.Sync, stub.Path,
            $"Another site wrote '{from}' before this rename reached the bucket, and the stub's version is gone: the stub now stands for that site's version ({ByteSize.Format(stub.Size)}), which goes to the new name and stays under the old one.");
        return Followed.NewerVersion;
    }

    private enum Followed
    {
        No,
        NewerVersion,
        Delete,
    }

    /// <summary>
    /// Recalls a renamed stub from its old key (path lock held): before something overwrites what it stands for, or when it is
    /// opened. The old key's object replaced or deleted by another site meanwhile, the stub follows that first
    /// (<see cref="StubFollowedItsOldKeyLocked"/>) and a newer version is recalled. Null when the stub followed a delete (it is
    /// gone). Before, the recall failed at every tick for good and held up the copy or upload waiting for it (two-site random
    /// test, seed 282930557), and an open failed with ObjectMismatch until the tick's copy had settled it.
    /// </summary>
    private async Task<FileEntry?> RecallRenamedStubLockedAsync(FileEntry stub, CancellationToken cancellationToken)
    {
        try
        {
            // A check as an open's recall is: a refusal is followed below, not an error of its own.
            return (await RecallAnsweredLockedAsync(stub, asCheck: true, cancellationToken)).Entry;
        }
        catch (GeoDriveException ex) when (ex.ErrorId is ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound
                                           && _index.Get(stub.Path) is { State: FileState.Stubbed } again && again.ObjectKey is { } from)
        {
            var followed = await StubFollowedItsOldKeyLocked(again, from, cancellationToken);
            if (followed == Followed.No)
            {
                // As a recall that fails records it (the entry read back is a copy: set alone, it was lost).
                again.LastError = ex.Message;
                _life.Save(again);
                Record(DriveEventKind.Error, again.Path, $"Recall failed: {ex.Message}", ex.ErrorId);
                throw;
            }
            return followed == Followed.Delete ? null : await RecallLockedAsync(again, cancellationToken);
        }
    }

    private bool IsRenamedStub(FileEntry entry) =>
        entry is { State: FileState.Stubbed, ObjectKey: { } key } && !ObjectLayout.IsOwnKey(Options.Prefix, key, entry.Path, Options.CaseInsensitive);

    /// <summary>
    /// A renamed clean file's new name holds another site's version this drive never knew (docs/architecture.md, the
    /// conflict rule): its bytes come home (a stub is recalled from its old key, which still holds them) and it is Dirty.
    /// Its upload finds that version and keeps both: the local bytes under a conflict name, the name the bucket's file.
    /// </summary>
    private async Task RenamedOntoTakenNameAsync(string path, string from, CancellationToken cancellationToken)
    {
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            if (_index.Get(path) is not { State: FileState.Cached or FileState.Stubbed } entry || entry.ObjectKey != from)
            {
                return;
            }
            if (entry.State == FileState.Stubbed)
            {
                if (await RecallRenamedStubLockedAsync(entry, cancellationToken) is not { } recalled)
                {
                    return;
                }
                entry = recalled;
            }
            if (LocalFile.Read(LocalPath(path)) is { } local)
            {
                _life.Apply(entry, ApplyChange(entry, local));
                _uploads.QueueIfDue(entry);
            }
        }
    }

    /// <summary>
    /// Before <paramref name="key"/> is overwritten (an upload, a rename's copy): a renamed stub whose bytes still live there
    /// comes home first. The holder is asked again under its lock: renamed on while this waited for that lock, its hold went
    /// with it (<see cref="RenamedKeys.Moving"/>), and the stub is followed to its new name. Only that holder's hold ends here;
    /// before, a rename in the wait left the old name empty, the key was let go, and the upload replaced the stub's only copy
    /// (randomized crash test, seed 382177918).
    /// </summary>
    private async Task RescueDisplacedStubAsync(string key, string uploadingPath, CancellationToken cancellationToken)
    {
        while (_renamed.HolderOf(key) is { } stubPath && stubPath != uploadingPath)
        {
            using (await _locks.AcquireAsync(stubPath, cancellationToken))
            {
                if (_renamed.HolderOf(key) != stubPath)
                {
                    continue;
                }
                if (_index.Get(stubPath) is { } stub && stub.ObjectKey == key && await RecallRenamedStubLockedAsync(stub, cancellationToken) is { } recalled)
                {
                    stub = recalled;
                    if (Files.LocalFile.Read(LocalPath(stubPath)) is { } local)
                    {
                        _life.Apply(stub, ApplyChange(stub, local));
                    }
                }
                _renamed.Release(key, stubPath);
            }
        }
    }

    private static GeoDriveException NotFound(string path) => new(
        ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
        $"The drive has no file '{path}'.",
        "Check the path with Get-CloudFile; paths are relative to the drive root.");
}
