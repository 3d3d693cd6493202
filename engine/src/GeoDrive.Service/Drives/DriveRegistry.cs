using System.Collections.Concurrent;
using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;
using GeoDrive.Service.Hosting;
using GeoDrive.Storage.S3;
using DriveInfo = GeoDrive.Api.DriveInfo;

namespace GeoDrive.Service.Drives;

/// <summary>
/// All drives of this service: creates, removes, mounts and dismounts them, restores them after a
/// restart, and runs every drive's scheduler. Drive operations are serialised; file work is not.
/// </summary>
public sealed partial class DriveRegistry(ServiceOptions options, IClock clock, ILoggerFactory loggers, DrivePlatform platform) : BackgroundService
{
    private readonly DriveConfigStore _config = new(options.HomePath);
    private readonly LastGoodPolicyStore _lastGoodPolicies = new(options.HomePath);
    // Written under _gate; read from anywhere (a request's Host(), the tick loop), so it must be safe to read while written.
    private readonly ConcurrentDictionary<string, DriveHost> _drives = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<DriveDefinition> _definitions = [];
    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly DrivePasses _passes = new(TimeProvider.System, loggers.CreateLogger("GeoDrive.Service"));
    private readonly ILogger _logger = loggers.CreateLogger("GeoDrive.Service");
    private readonly TaskCompletionSource _restored = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public int Count => _definitions.Count;

    /// <summary>Completes once the drives of the last run are back (mounted where they were).</summary>
    public Task Restored => _restored.Task;

    public async Task<IReadOnlyList<DriveInfo>> ListAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            return _definitions.Select(Describe).ToList();
        }
        finally
        {
            _gate.Release();
        }
    }

    public async Task<DriveInfo> GetAsync(string name, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            return Describe(Definition(name));
        }
        finally
        {
            _gate.Release();
        }
    }

    public DriveEngine Engine(string name) => Host(name).Engine;

    public DriveHost Host(string name) =>
        _drives.TryGetValue(name, out var host) ? host : throw NotRunning(name);

    public async Task<DriveInfo> CreateAsync(NewDriveRequest request, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            var definition = DriveRequests.NewDefinition(request, _definitions, platform.FrontEnd.ServesCacheInPlace);
            DriveRequests.CheckFolders(definition, platform.FrontEnd.ServesCacheInPlace);
            var loaded = PolicySet.Read(definition.PolicyPaths);
            var policy = loaded.Policy;
            var credential = definition.CredentialKind == DriveCredential.KindProfile
                ? LoadCredential(definition)
                : new DriveCredential { AccessKey = request.AccessKey, SecretKey = request.SecretKey };
            await DriveStores.ProbeAsync(definition, credential, null, cancellationToken);

            Directory.CreateDirectory(definition.CachePath);
            var peerKey = DriveRequests.PeerKeyOf(request.PeerKey);
            var host = await DriveHost.OpenAsync(definition, credential, policy, clock, loggers, platform, options.LateWriteGrace, null, l => KeepLastGoodPolicy(definition.Name, l), cancellationToken);
            try
            {
                // A listener that cannot bind refuses the drive before anything is kept.
                await host.StartPeersAsync(peerKey, clock, DriveLogger(definition), catchUp: false, cancellationToken);
                host.PeerKeySet = peerKey is not null;
                if (request.Mount)
                {
                    host.Mount();
                    definition.Mounted = true;
                }
            }
            catch
            {
                await host.DisposeAsync();
                throw;
            }
            if (definition.CredentialKind == DriveCredential.KindCredential)
            {
                _config.SaveCredential(definition.Name, credential);
            }
            if (peerKey is not null)
            {
                _config.SavePeerKey(definition.Name, peerKey);
            }
            _definitions.Add(definition);
            _config.SaveDefinitions(_definitions);
            KeepLastGoodPolicy(definition.Name, loaded);
            _drives[definition.Name] = host;
            _logger.LogInformation("Drive {Name} created: cache {Cache}, mount {Mount}, bucket {Bucket} at {Endpoint}", definition.Name, definition.CachePath, definition.MountPath, definition.Bucket, string.Join(", ", definition.AdditionalEndpoints.Prepend(definition.Endpoint)));
            // Said, not refused: a bucket without versions works, but nothing overwritten or deleted can be brought back.
            return await host.KeepsVersionsAsync(cancellationToken) == false
                ? host.ToInfo([$"Bucket '{definition.Bucket}' keeps no versions: a file overwritten or deleted on this drive cannot be brought back with Restore-CloudFile. Turn versioning on for the bucket (S3: PutBucketVersioning, Status Enabled) to keep them."])
                : host.ToInfo();
        }
        finally
        {
            _gate.Release();
        }
    }

    public async Task RemoveAsync(string name, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            var definition = Definition(name);
            // Not in the middle of a scheduler pass over this drive (an upload or stub half-way).
            using (await _passes.ExclusiveAsync(cancellationToken))
            {
                if (_drives.TryRemove(definition.Name, out var host))
                {
                    await host.DisposeAsync();
                }
            }
            _definitions.Remove(definition);
            _config.SaveDefinitions(_definitions);
            _config.DeleteCredential(definition.Name);
            _lastGoodPolicies.Delete(definition.Name);
            platform.Backup?.Remove(definition.Name);
            // The cache folder and the bucket stay as they are: removing a drive never deletes data.
            _logger.LogInformation("Drive {Name} removed; its cache {Cache} and bucket were left as they are", definition.Name, definition.CachePath);
        }
        finally
        {
            _gate.Release();
        }
    }

    public async Task<DriveInfo> SetMountedAsync(string name, bool mounted, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            var definition = Definition(name);
            var host = _drives.TryGetValue(definition.Name, out var h) ? h : await StartDriveAsync(definition, cancellationToken);
            if (mounted)
            {
                host.Mount();
            }
            else
            {
                host.Dismount();
            }
            definition.Mounted = mounted;
            _config.SaveDefinitions(_definitions);
            return host.ToInfo();
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Suspend-CloudDrive / Resume-CloudDrive: pauses or resumes the drive's uploads, remembered across restarts.</summary>
    public async Task<DriveInfo> SetSuspendedAsync(string name, bool suspended, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            var definition = Definition(name);
            var host = _drives.TryGetValue(definition.Name, out var h) ? h : await StartDriveAsync(definition, cancellationToken);
            definition.Suspended = suspended;
            host.Engine.UploadsSuspended = suspended;
            _config.SaveDefinitions(_definitions);
            host.Engine.RecordPolicyEvent(suspended ? "Uploads suspended (Suspend-CloudDrive)." : "Uploads resumed (Resume-CloudDrive).");
            return host.ToInfo();
        }
        finally
        {
            _gate.Release();
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await RestoreAsync(stoppingToken);
        await _passes.RunAsync<DriveHost>(options.TickInterval,
            () => [.. _drives.Values.Select(h => (h.Definition.Name, h))],
            host => _drives.TryGetValue(host.Definition.Name, out var current) && ReferenceEquals(current, host),
            async (host, cancellationToken) =>
            {
                host.ReloadPolicyIfChanged();
                await host.Engine.TickAsync(cancellationToken);
                // A sample per pass keeps the status window's rates current between status queries.
                host.Engine.Transfers.Snapshot(clock.UtcNow);
            },
            stoppingToken);
    }

    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        await base.StopAsync(cancellationToken);
        await _gate.WaitAsync(cancellationToken);
        try
        {
            foreach (var host in _drives.Values)
            {
                await host.DisposeAsync();
            }
            _drives.Clear();
        }
        finally
        {
            _gate.Release();
        }
    }

    private async Task RestoreAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            _definitions.AddRange(_config.LoadDefinitions());
            foreach (var definition in _definitions)
            {
                try
                {
                    var host = await StartDriveAsync(definition, cancellationToken);
                    if (definition.Mounted)
                    {
                        host.Mount();
                    }
                }
                catch (Exception ex) when (ex is not OperationCanceledException)
                {
                    // One broken drive must not keep the others down; Get-CloudDrive shows why.
                    _logger.LogError("Drive {Name} could not start: {Message}", definition.Name, ex.Message);
                    if (_drives.TryGetValue(definition.Name, out var host))
                    {
                        host.LastError = ex.Message;
                    }
                    else
                    {
                        _startErrors[definition.Name] = ex.Message;
                    }
                }
            }
        }
        finally
        {
            _gate.Release();
            _restored.TrySetResult();
        }
    }

    /// <summary>
    /// The drive's peer link at a start: a listener that cannot bind (its port taken meanwhile) leaves the drive running,
    /// untold, with an event and a log line saying why; the drive catches up with the bucket in the background.
    /// </summary>
    private async Task StartPeersAsync(DriveHost host, bool catchUp, CancellationToken cancellationToken)
    {
        var peerKey = _config.LoadPeerKey(host.Definition.Name);
        host.PeerKeySet = peerKey is not null;
        try
        {
            await host.StartPeersAsync(peerKey, clock, DriveLogger(host.Definition), catchUp, cancellationToken);
        }
        catch (GeoDriveException ex)
        {
            _logger.LogError("Drive {Name}: its peers are not told or heard: {Message} ({ErrorId})", host.Definition.Name, ex.Message, ex.ErrorId);
            host.Engine.RecordEvent(GeoDrive.Core.Model.DriveEventKind.Error, null, $"Peers are not told or heard: {ex.Message} {ex.Remedy}", ex.ErrorId);
        }
    }

    private ILogger DriveLogger(DriveDefinition definition) => loggers.CreateLogger($"GeoDrive.Drive.{definition.Name}");

    private readonly Dictionary<string, string> _startErrors = new(StringComparer.OrdinalIgnoreCase);

    private async Task<DriveHost> StartDriveAsync(DriveDefinition definition, CancellationToken cancellationToken)
    {
        var (policy, refused) = PolicyForStart(definition);
        var credential = LoadCredential(definition);
        var host = await DriveHost.OpenAsync(definition, credential, policy, clock, loggers, platform, options.LateWriteGrace, refused, l => KeepLastGoodPolicy(definition.Name, l), cancellationToken);
        if (refused is not null)
        {
            var message = $"The policy files did not load at start: {refused.Message} The drive started with its last good policy. "
                + "Fix the file; the last good policy is in force until it loads, and a saved fix takes effect as any save does.";
            _logger.LogError("Drive {Name}: {Message} ({ErrorId})", definition.Name, message, refused.ErrorId);
            host.Engine.RecordPolicyEvent(message, refused.ErrorId);
        }
        host.Engine.UploadsSuspended = definition.Suspended;
        await StartPeersAsync(host, catchUp: true, cancellationToken);
        _drives[definition.Name] = host;
        _startErrors.Remove(definition.Name);
        return host;
    }

    /// <summary>
    /// The drive's policy files, or, when one of them does not load (cut short by a crash, a bad edit made
    /// while the service was stopped), the last good policy the service kept, with the refusal. A drive
    /// that never had a good policy here is refused, as before.
    /// </summary>
    private (PolicyEvaluator Policy, GeoDriveException? Refused) PolicyForStart(DriveDefinition definition)
    {
        try
        {
            var loaded = PolicySet.Read(definition.PolicyPaths);
            KeepLastGoodPolicy(definition.Name, loaded);
            return (loaded.Policy, null);
        }
        catch (PolicyException ex) when (_lastGoodPolicies.Load(definition.Name) is { } lastGood)
        {
            return (lastGood.Policy, ex);
        }
    }

    private void KeepLastGoodPolicy(string driveName, LoadedPolicy loaded)
    {
        try
        {
            _lastGoodPolicies.Save(driveName, loaded);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // The drive runs on with the policy that loaded; only the fallback for a later start is older.
            _logger.LogWarning("Drive {Name}: the copy of its last good policy could not be kept in {Path}: {Message}", driveName, _lastGoodPolicies.FileOf(driveName), ex.Message);
        }
    }

    private DriveInfo Describe(DriveDefinition definition) =>
        _drives.TryGetValue(definition.Name, out var host)
            ? host.ToInfo()
            : new DriveInfo
            {
                Name = definition.Name,
                CachePath = definition.CachePath,
                MountPath = definition.MountPath,
                Endpoint = definition.Endpoint,
                Endpoints = [definition.Endpoint, .. definition.AdditionalEndpoints],
                Bucket = definition.Bucket,
                Prefix = definition.Prefix,
                CaseInsensitive = definition.CaseInsensitive,
                PolicyPaths = definition.PolicyPaths,
                LastError = _startErrors.GetValueOrDefault(definition.Name),
                CredentialKind = definition.CredentialKind,
                ProfileName = definition.ProfileName,
                ProfileLocation = definition.ProfileLocation,
                Peers = definition.Peers,
                PeerListen = definition.PeerListen,
                PeerKeySet = _config.LoadPeerKey(definition.Name) is not null,
            };

    private DriveDefinition Definition(string name) =>
        _definitions.FirstOrDefault(d => string.Equals(d.Name, name, StringComparison.OrdinalIgnoreCase))
        ?? throw new GeoDriveException(ErrorIds.DriveNotFound, ErrorKind.ObjectNotFound,
            $"There is no cloud drive named '{name}'.", "List the drives with Get-CloudDrive.");

    private GeoDriveException NotRunning(string name)
    {
        var definition = Definition(name);
        return new GeoDriveException(ErrorIds.DriveNotMounted, ErrorKind.ResourceUnavailable,
            $"The cloud drive '{definition.Name}' is not running: {_startErrors.GetValueOrDefault(definition.Name) ?? "it failed to start"}.",
            "Fix the cause shown by Get-CloudDrive, then run Mount-CloudDrive.");
    }
}
