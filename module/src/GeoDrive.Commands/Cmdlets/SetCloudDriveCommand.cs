using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// Changes a cloud drive's configuration: its policy files (in force at once, as a saved policy is),
/// its S3 endpoint, its credential (the drive's store restarts). Values equal to the current ones
/// change nothing.
/// </summary>
[Cmdlet(VerbsCommon.Set, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class SetCloudDriveCommand : DriveStateCmdlet
{
    #region Parameters

    /// <summary>The drive's policy files, in order; @() leaves it on the built-in defaults.</summary>
    [Parameter]
    [AllowEmptyCollection]
    public string[]? PolicyPath { get; set; }

    /// <summary>The S3 endpoint URL; the drive's store restarts on it.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string[]? Endpoint { get; set; }

    /// <summary>UserName = access key id, Password = secret access key; the drive's store restarts with it.</summary>
    [Parameter]
    [Credential]
    [ValidateNotNull]
    public PSCredential? Credential { get; set; }

    /// <summary>Fixed when a drive is made: the drive's own value changes nothing, the other is refused (CaseSensitivityFixed).</summary>
    [Parameter]
    public SwitchParameter CaseInsensitive { get; set; }
    /// <summary>The peer listeners told of the drive's changes; @() tells none.</summary>
    [Parameter]
    [AllowEmptyCollection]
    public string[]? Peer { get; set; }

    /// <summary>address:port where the drive hears its peers; '' stops listening.</summary>
    [Parameter]
    [AllowEmptyString]
    public string? PeerListen { get; set; }

    /// <summary>A new peer key (every site of the drive must hold the same).</summary>
    [Parameter]
    [ValidateNotNull]
    public System.Security.SecureString? PeerKey { get; set; }

    #endregion

    private SetDriveRequest _request = new();

    protected override void BeginProcessing()
    {
        var caseInsensitive = MyInvocation.BoundParameters.ContainsKey(nameof(CaseInsensitive)) ? CaseInsensitive.IsPresent : (bool?)null;
        if (PolicyPath is null && Endpoint is null && Credential is null && caseInsensitive is null && Peer is null && PeerListen is null && PeerKey is null)
        {
            ThrowTerminatingError(NewError(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                Messages.NothingToSet, Messages.NothingToSetRemedy, null));
        }
        // None of these bind from the pipeline: one request serves every drive named.
        _request = new SetDriveRequest
        {
            PolicyPaths = PolicyPath?.Where(p => !string.IsNullOrWhiteSpace(p)).Select(ResolveLocalPath).ToArray(),
            Endpoints = Endpoint,
            AccessKey = Credential?.UserName,
            SecretKey = Credential?.GetNetworkCredential().Password,
            CaseInsensitive = caseInsensitive,
            Peers = Peer?.Where(p => !string.IsNullOrWhiteSpace(p)).ToArray(),
            PeerListen = PeerListen,
            PeerKey = PeerKey is null ? null : new System.Net.NetworkCredential("", PeerKey).Password,
        };
    }

    protected override string Action => Messages.SetCloudDriveAction(_request.PolicyPaths, _request.Endpoints, _request.AccessKey, _request.Peers, _request.PeerListen, _request.PeerKey is not null);

    protected override Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken) =>
        client.SetDriveAsync(name, _request, cancellationToken);
}
