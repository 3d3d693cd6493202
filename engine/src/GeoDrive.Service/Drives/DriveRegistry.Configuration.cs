using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Storage.S3;
using DriveInfo = GeoDrive.Api.DriveInfo;

namespace GeoDrive.Service.Drives;

/// <summary>
/// Set-CloudDrive: changes a drive's policy files, endpoint or credential. Everything is checked
/// before anything changes (the policy loads, the new endpoint and keys can list the bucket); a
/// value equal to the current one changes nothing, so applying a configuration twice is a no-op.
/// </summary>
public sealed partial class DriveRegistry
{
    public async Task<DriveInfo> ReconfigureAsync(string name, SetDriveRequest request, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            var definition = Definition(name);
            if (request.CaseInsensitive is { } caseInsensitive && caseInsensitive != definition.CaseInsensitive)
            {
                // Every key the drive wrote is in the case the setting chose: another setting would look for them elsewhere.
                throw new GeoDriveException(ErrorIds.CaseSensitivityFixed, ErrorKind.InvalidArgument,
                    $"The cloud drive '{definition.Name}' compares names {(definition.CaseInsensitive ? "case-insensitively" : "case-sensitively")}; that is fixed when a drive is made, because its keys in the bucket are written by that rule.",
                    $"Leave -CaseInsensitive out, or make a new drive on an empty cache folder with New-CloudDrive -CaseInsensitive:${(caseInsensitive ? "true" : "false")} (Remove-CloudDrive forgets this one and keeps its cache and bucket).");
            }

            var policyPaths = request.PolicyPaths?.Where(p => !string.IsNullOrWhiteSpace(p)).Select(DriveRequests.FullPolicyPath).ToArray();
            var policyChanged = policyPaths is not null && !policyPaths.SequenceEqual(definition.PolicyPaths, StringComparer.Ordinal);
            // A bad file is refused whole, with file:line:column, exactly as New-CloudDrive refuses it.
            var policy = policyChanged ? PolicySet.Read(policyPaths!) : null;

            var endpoints = request.Endpoints is null ? null : DriveRequests.EndpointsOf(request.Endpoints);
            var endpointChanged = endpoints is not null && !endpoints.SequenceEqual([definition.Endpoint, .. definition.AdditionalEndpoints], StringComparer.Ordinal);

            var credential = DriveRequests.CredentialOf(request);
            var credentialChanged = credential is not null && !SameCredential(credential, _config.LoadCredential(definition.Name));

            if (endpointChanged || credentialChanged)
            {
                await DriveStores.ProbeAsync(definition, credential ?? _config.LoadCredential(definition.Name), endpoints, cancellationToken);
            }

            if (policyChanged)
            {
                definition.PolicyPaths = policyPaths!;
                _config.SaveDefinitions(_definitions);
                KeepLastGoodPolicy(definition.Name, policy!);
                if (RunningHost(definition.Name) is { } host)
                {
                    ApplyPolicy(host, policyPaths!, policy!.Policy);
                }
                _logger.LogInformation("Drive {Name}: policy files set to {Paths}", definition.Name, string.Join(", ", policyPaths!));
            }

            await ReconfigurePeersAsync(definition, request, restarting: endpointChanged || credentialChanged, cancellationToken);

            if (endpointChanged || credentialChanged)
            {
                await RestartStoreAsync(definition, endpoints, credential, cancellationToken);
            }
            return Describe(definition);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>
    /// -Peer, -PeerListen, -PeerKey: checked first (a key for any peer or listener, a port no other drive listens on);
    /// the running drive's link is started again with them, and a listener that cannot bind puts the old settings back.
    /// </summary>
    private async Task ReconfigurePeersAsync(DriveDefinition definition, SetDriveRequest request, bool restarting, CancellationToken cancellationToken)
    {
        var peers = request.Peers is null ? definition.Peers : DriveRequests.PeersOf(request.Peers);
        var listen = request.PeerListen is null ? definition.PeerListen : DriveRequests.PeerListenOf(request.PeerListen);
        var newKey = DriveRequests.PeerKeyOf(request.PeerKey);
        var oldKey = _config.LoadPeerKey(definition.Name);
        var changed = !peers.SequenceEqual(definition.Peers, StringComparer.OrdinalIgnoreCase) || listen != definition.PeerListen
            || (newKey is not null && newKey != oldKey);
        if (!changed)
        {
            return;
        }
        if ((peers.Length > 0 || listen is not null) && (newKey ?? oldKey) is null)
        {
            throw DriveRequests.PeerKeyMissing();
        }
        if (listen is not null && _definitions.FirstOrDefault(d => d != definition && d.PeerListen == listen) is { } listening)
        {
            throw DriveRequests.Invalid($"The drive '{listening.Name}' already listens for its peers on {listen}.", "Give every drive its own -PeerListen port.");
        }
        var (oldPeers, oldListen) = (definition.Peers, definition.PeerListen);
        definition.Peers = peers;
        definition.PeerListen = listen;
        if (!restarting && RunningHost(definition.Name) is { } host)
        {
            try
            {
                await host.StartPeersAsync(newKey ?? oldKey, clock, DriveLogger(definition), catchUp: false, cancellationToken);
            }
            catch (GeoDriveException)
            {
                (definition.Peers, definition.PeerListen) = (oldPeers, oldListen);
                await host.StartPeersAsync(oldKey, clock, DriveLogger(definition), catchUp: false, cancellationToken);
                throw;
            }
            host.PeerKeySet = (newKey ?? oldKey) is not null;
            host.Engine.RecordPolicyEvent($"Peers set (Set-CloudDrive): told {(peers.Length == 0 ? "none" : string.Join(", ", peers))}; listening {(listen ?? "nowhere")}{(newKey is null ? "" : "; new peer key")}.");
        }
        if (newKey is not null)
        {
            _config.SavePeerKey(definition.Name, newKey);
        }
        _config.SaveDefinitions(_definitions);
        _logger.LogInformation("Drive {Name}: peers {Peers}, listening {Listen} (Set-CloudDrive)", definition.Name, peers.Length == 0 ? "none" : string.Join(", ", peers), listen ?? "nowhere");
    }

    /// <summary>The same step the scheduler's hot reload takes, for files named by Set-CloudDrive.</summary>
    private static void ApplyPolicy(DriveHost host, string[] paths, PolicyEvaluator policy)
    {
        host.Policy.Replace(paths, policy);
        host.Engine.UpdatePolicy(policy);
        host.Engine.RecordPolicyEvent(paths.Length == 0
            ? "Policy files removed (Set-CloudDrive); the built-in defaults are in force."
            : $"Policy files set to {string.Join(", ", paths)} (Set-CloudDrive).");
    }

    /// <summary>
    /// Stops the drive (no scheduler pass is running: the pass gate is held; the mount is detached),
    /// records the new endpoint and credential, and starts it again, mounted if it was meant to be.
    /// Files left Dirty are uploaded by the restarted drive, as after a service restart.
    /// </summary>
    private async Task RestartStoreAsync(DriveDefinition definition, string[]? endpoints, DriveCredential? credential, CancellationToken cancellationToken)
    {
        using (await _passes.ExclusiveAsync(cancellationToken))
        {
            if (_drives.TryRemove(definition.Name, out var old))
            {
                await old.DisposeAsync();
            }
            if (endpoints is not null)
            {
                definition.Endpoint = endpoints[0];
                definition.AdditionalEndpoints = endpoints[1..];
            }
            if (credential is not null)
            {
                _config.SaveCredential(definition.Name, credential);
            }
            _config.SaveDefinitions(_definitions);
            _logger.LogInformation("Drive {Name}: store restarted on {Endpoint} (Set-CloudDrive)", definition.Name, definition.Endpoint);
            try
            {
                var host = await StartDriveAsync(definition, cancellationToken);
                if (definition.Mounted)
                {
                    host.Mount();
                }
                host.Engine.RecordPolicyEvent(
                    $"Store restarted (Set-CloudDrive): endpoint {string.Join(", ", [definition.Endpoint, .. definition.AdditionalEndpoints])}{(credential is null ? "" : ", new credential")}.");
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                // The new settings are kept (they passed the probe); Get-CloudDrive shows why it is down.
                _startErrors[definition.Name] = ex.Message;
                if (_drives.TryGetValue(definition.Name, out var started))
                {
                    started.LastError = ex.Message;
                }
                throw;
            }
        }
    }

    private static bool SameCredential(DriveCredential a, DriveCredential b) =>
        string.Equals(a.AccessKey, b.AccessKey, StringComparison.Ordinal) && string.Equals(a.SecretKey, b.SecretKey, StringComparison.Ordinal);
}
