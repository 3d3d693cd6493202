using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Model;
using GeoDrive.Service.FrontEnds;
using GeoDrive.Service.Hosting;
using GeoDrive.State;
using GeoDrive.Storage.S3;
using DriveInfo = GeoDrive.Api.DriveInfo;

namespace GeoDrive.Service.Drives;

/// <summary>One running drive: its index, store, engine and (when mounted) its front end (FUSE on Linux, ProjFS on Windows).</summary>
public sealed class DriveHost : IAsyncDisposable
{
    private readonly IFileIndex _index;
    private readonly S3ObjectStore _store;
    private readonly IDriveFrontEnd _frontEnd;
    private readonly FrontEndContext _context;
    private IDriveMount? _mount;
    private Peers.PeerLink? _peers;
    private Task _catchUp = Task.CompletedTask;
    private readonly CancellationTokenSource _stopping = new();

    private DriveHost(DriveDefinition definition, IFileIndex index, S3ObjectStore store, DriveEngine engine, IDriveFrontEnd frontEnd, FrontEndContext context)
    {
        Definition = definition;
        _index = index;
        _store = store;
        Engine = engine;
        _frontEnd = frontEnd;
        _context = context;
    }

    public DriveDefinition Definition { get; }

    public DriveEngine Engine { get; }

    public bool IsMounted => _mount is not null;

    public string? LastError { get; set; }

    /// <summary>Masked (<see cref="DriveCredential.Mask"/>): the only part of the credential a DriveInfo carries.</summary>
    public string? AccessKeyId { get; private init; }

    /// <summary>The drive's policy files and the last good policy made of them.</summary>
    public required PolicyFiles Policy { get; init; }

    /// <summary>Hot reload: a changed policy file takes effect now; a broken one is refused and the last good policy stays.</summary>
    public void ReloadPolicyIfChanged()
    {
        switch (Policy.ReloadIfChanged())
        {
            case { Policy: { } policy }:
                _store.UseMultipart(DriveStores.Multipart(policy));
                Engine.UpdatePolicy(policy);
                Engine.RecordPolicyEvent($"Policy reloaded from {string.Join(", ", Policy.Paths)}.");
                break;
            case { Refusal: { } refusal }:
                Engine.RecordPolicyEvent($"Policy change refused, the last good policy stays in force: {refusal.FullMessage}", refusal.ErrorId);
                break;
        }
    }

    /// <param name="policyRefusedAtStart">Why the policy files did not load, when <paramref name="policy"/> is the last good copy.</param>
    /// <param name="policyLoaded">Told of each set of policy files that loads from now on (hot reload).</param>
    public static async Task<DriveHost> OpenAsync(DriveDefinition definition, DriveCredential credential, PolicyEvaluator policy, IClock clock, ILoggerFactory loggers, DrivePlatform platform, TimeSpan lateWriteGrace,
        GeoDrive.Core.Errors.GeoDriveException? policyRefusedAtStart, Action<LoadedPolicy>? policyLoaded, CancellationToken cancellationToken)
    {
        // transfer.* is read when the drive starts; a change to it takes effect at the next mount or service start.
        var engineOptions = new DriveEngineOptions
        {
            Name = definition.Name,
            CachePath = definition.CachePath,
            Prefix = definition.Prefix,
            CaseInsensitive = definition.CaseInsensitive,
            UploadConcurrency = policy.Policy.UploadThreads.Value,
            InternalPath = platform.FrontEnd.StatePath(definition),
            // The service's tick only queues settled files; the upload workers run on between ticks.
            TickWaitsForUploads = false,
            LateWriteGrace = lateWriteGrace,
        };
        OwnerOnly.Folder(engineOptions.InternalPath);
        var index = LiteDbFileIndex.Open(Path.Combine(engineOptions.InternalPath, "index.db"));
        var store = DriveStores.Open(definition, credential, policy);
        try
        {
            var logger = loggers.CreateLogger($"GeoDrive.Drive.{definition.Name}");
            var engine = new DriveEngine(engineOptions, store, index, policy, clock, logger);
            var context = new FrontEndContext(definition, engine, index, engineOptions.InternalPath, logger);
            platform.FrontEnd.Prepare(context);
            if (platform.DriveEvents is { } driveEvents)
            {
                engine.EventRecorded += e => driveEvents(definition.Name, e);
            }
            platform.Backup?.Apply(definition);
            await engine.StartAsync(cancellationToken);
            return new DriveHost(definition, index, store, engine, platform.FrontEnd, context)
            {
                AccessKeyId = DriveCredential.Mask(credential.AccessKey),
                Policy = new PolicyFiles(definition.PolicyPaths, policy, policyRefusedAtStart) { Loaded = policyLoaded },
            };
        }
        catch
        {
            index.Dispose();
            store.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Tells the drive's peers of its changes and, when it listens, hears theirs (docs/decisions/0020-peers-told-of-changes.md);
    /// the link in place is replaced. A drive that listens catches up with the bucket in the background when
    /// <paramref name="catchUp"/> (at its start: it may have missed notices while down). Refused (PeerListenFailed)
    /// when its listener cannot bind; PeerKeyMissing when peers are named without a key.
    /// </summary>
    public async Task StartPeersAsync(string? peerKey, IClock clock, ILogger logger, bool catchUp, CancellationToken cancellationToken)
    {
        await StopPeersAsync();
        var listen = Peers.PeerLink.ParseListen(Definition.PeerListen);
        if (Definition.Peers.Length == 0 && listen is null)
        {
            return;
        }
        if (peerKey is null)
        {
            throw DriveRequests.PeerKeyMissing();
        }
        _peers = await Peers.PeerLink.StartAsync(new Peers.PeerLinkOptions
        {
            DriveName = Definition.Name,
            Bucket = Definition.Bucket,
            Prefix = Definition.Prefix,
            Peers = Definition.Peers,
            Listen = listen,
        }, peerKey, Engine, clock, logger, cancellationToken);
        if (catchUp && _peers.Listens)
        {
            _catchUp = CatchUpAsync(logger);
        }
    }

    private async Task CatchUpAsync(ILogger logger)
    {
        await Task.Yield();
        try
        {
            await Engine.CatchUpWithBucketAsync(_stopping.Token);
        }
        catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
        {
        }
        catch (Exception ex) when (ex is GeoDriveException or IOException or UnauthorizedAccessException)
        {
            Engine.RecordEvent(DriveEventKind.Error, null,
                $"The catch-up with the bucket at start did not finish: {ex.Message} Folders are synced at their next listing after updateWait; Sync-CloudDrive syncs them all now.",
                (ex as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
            logger.LogWarning("{Drive}: catch-up with the bucket failed: {Message}", Definition.Name, ex.Message);
        }
    }

    private async Task StopPeersAsync()
    {
        if (_peers is { } link)
        {
            _peers = null;
            await link.DisposeAsync();
        }
    }

    public void Mount()
    {
        _mount ??= _frontEnd.Mount(_context);
    }

    public void Dismount()
    {
        _mount?.Unmount();
        _mount = null;
    }

    private DriveSyncInfo? _sync;
    private int _syncing;

    /// <summary>The Sync-CloudDrive under way, else the last one since the service started (null: none).</summary>
    public DriveSyncInfo? SyncProgress => Volatile.Read(ref _sync);

    /// <summary>Sync-CloudDrive: one at a time per drive; its progress readable meanwhile (<see cref="SyncProgress"/>).</summary>
    public async Task<DriveSyncInfo> SyncAsync(string path, IClock clock, CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _syncing, 1) == 1)
        {
            throw new GeoDriveException(ErrorIds.SyncInProgress, ErrorKind.ResourceUnavailable,
                $"A sync of drive '{Definition.Name}' is running ({SyncProgress?.Folders ?? 0} folder(s) so far).",
                "Wait for it to end (Get-CloudDriveStatus shows it), then sync again.");
        }
        var started = clock.UtcNow;
        DriveSyncInfo Info(TreeSync done, bool running) => new()
        {
            Drive = Definition.Name, Path = path, Running = running, Folders = done.Folders, FoldersMade = done.FoldersMade,
            StubsMade = done.StubsMade, Started = started, Ended = running ? null : clock.UtcNow,
        };
        var last = default(TreeSync);
        try
        {
            Volatile.Write(ref _sync, Info(last, running: true));
            last = await Engine.SyncTreeAsync(path, p => Volatile.Write(ref _sync, Info(last = p, running: true)), cancellationToken);
            return Info(last, running: false);
        }
        finally
        {
            // Ended, done or not: what it got to stays readable.
            Volatile.Write(ref _sync, Info(last, running: false));
            Volatile.Write(ref _syncing, 0);
        }
    }

    /// <summary>Whether the drive's bucket keeps versions (null: the server could not say).</summary>
    public Task<bool?> KeepsVersionsAsync(CancellationToken cancellationToken) => _store.KeepsVersionsAsync(cancellationToken);

    public DriveInfo ToInfo(string[]? warnings = null)
    {
        var counts = Engine.CountByState();
        long Count(FileState s) => counts.TryGetValue(s, out var n) ? n : 0;
        return new DriveInfo
        {
            Name = Definition.Name,
            Warnings = warnings ?? [],
            CachePath = Definition.CachePath,
            MountPath = Definition.MountPath,
            Endpoint = Definition.Endpoint,
            Endpoints = [Definition.Endpoint, .. Definition.AdditionalEndpoints],
            Bucket = Definition.Bucket,
            Prefix = Definition.Prefix,
            CaseInsensitive = Definition.CaseInsensitive,
            PolicyPaths = Definition.PolicyPaths,
            Mounted = IsMounted,
            Suspended = Engine.UploadsSuspended,
            CredentialKind = Definition.CredentialKind,
            AccessKeyId = AccessKeyId,
            ProfileName = Definition.ProfileName,
            ProfileLocation = Definition.ProfileLocation,
            FileCount = counts.Values.Sum(),
            DirtyCount = Count(FileState.Dirty) + Count(FileState.Uploading),
            CachedCount = Count(FileState.Cached),
            StubbedCount = Count(FileState.Stubbed) + Count(FileState.Recalling),
            LastError = LastError,
            Peers = Definition.Peers,
            PeerListen = Definition.PeerListen,
            PeerKeySet = PeerKeySet,
        };
    }

    /// <summary>Whether the service keeps a peer key for the drive (set by the registry; the key itself stays there).</summary>
    public bool PeerKeySet { get; set; }

    public DriveStatusInfo ToStatus(DateTimeOffset nowUtc)
    {
        var counts = Engine.CountByState();
        var transfers = Engine.Transfers.Snapshot(nowUtc);
        return new DriveStatusInfo
        {
            Name = Definition.Name,
            Mounted = IsMounted,
            Suspended = Engine.UploadsSuspended,
            UploadQueue = counts[FileState.Dirty],
            Uploading = counts[FileState.Uploading],
            Recalling = counts[FileState.Recalling],
            BucketChangesOwed = Engine.OwedBucketChangeCount,
            BucketSilent = Engine.BucketSilent,
            Cached = counts[FileState.Cached],
            Stubbed = counts[FileState.Stubbed],
            Excluded = counts[FileState.Excluded],
            UploadingBytes = transfers.UploadingBytes,
            RecallingBytes = transfers.RecallingBytes,
            UploadRate = Math.Round(transfers.UploadBytesPerSecond),
            RecallRate = Math.Round(transfers.RecallBytesPerSecond),
            UploadedFiles = transfers.UploadedFiles,
            UploadedBytes = transfers.UploadedBytes,
            RecalledFiles = transfers.RecalledFiles,
            RecalledBytes = transfers.RecalledBytes,
        };
    }

    public async ValueTask DisposeAsync()
    {
        // Peers are told no more and heard no more; a catch-up under way stops.
        await _stopping.CancelAsync();
        await StopPeersAsync();
        await _catchUp;
        _stopping.Dispose();
        // A recall job still running stops first (recorded as Interrupted; it runs again at the next start).
        await Engine.StopRecallJobsAsync();
        Dismount();
        // Recalls in flight stop and leave their files clean stubs before the index closes.
        await Engine.StopRecallsAsync();
        // Upload workers stop before the index and store they use go away.
        await Engine.DisposeAsync();
        _index.Dispose();
        _store.Dispose();
    }
}
