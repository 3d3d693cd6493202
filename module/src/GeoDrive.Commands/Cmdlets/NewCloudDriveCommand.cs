using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Creates a cloud drive: a local cache folder in front of an S3 bucket, mounted at a path.</summary>
[Cmdlet(VerbsCommon.New, "CloudDrive", DefaultParameterSetName = CredentialSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class NewCloudDriveCommand : GeoDriveCmdlet
{
    private const string CredentialSet = "Credential";
    private const string ProfileSet = "Profile";

    #region Parameters

    [Parameter(Mandatory = true, Position = 0)]
    [ValidateNotNullOrEmpty]
    public string Name { get; set; } = "";

    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string CachePath { get; set; } = "";

    /// <summary>Linux: the empty folder where the drive is mounted (required there). Windows: left out; the cache folder is the drive.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string MountPath { get; set; } = "";

    /// <summary>The S3 endpoint, e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000; several URLs of the same store are used round-robin, a failing one taken out.</summary>
    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string[] Endpoint { get; set; } = [];

    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string Bucket { get; set; } = "";

    /// <summary>Key prefix inside the bucket under which the drive's objects live.</summary>
    [Parameter]
    public string Prefix { get; set; } = "";

    /// <summary>UserName = access key id, Password = secret access key; kept only by the service, in its protected store.</summary>
    [Parameter(Mandatory = true, ParameterSetName = CredentialSet)]
    [Credential]
    [ValidateNotNull]
    public PSCredential Credential { get; set; } = PSCredential.Empty;

    /// <summary>An AWS profile (shared credentials file) that the service reads at every drive start, instead of -Credential.</summary>
    [Parameter(Mandatory = true, ParameterSetName = ProfileSet)]
    [ValidateNotNullOrEmpty]
    public string ProfileName { get; set; } = "";

    /// <summary>The credentials file that holds -ProfileName (default: the service user's ~/.aws/credentials and config).</summary>
    [Parameter(ParameterSetName = ProfileSet)]
    [ValidateNotNullOrEmpty]
    public string ProfileLocation { get; set; } = "";

    /// <summary>Policy files, applied in order (later scalars override, lists concatenate).</summary>
    [Parameter]
    [AllowEmptyString]
    [AllowEmptyCollection]
    public string[] PolicyPath { get; set; } = [];

    [Parameter]
    [ValidateNotNullOrEmpty]
    public string Region { get; set; } = "us-east-1";

    /// <summary>Only record the drive; mount it later with Mount-CloudDrive.</summary>
    [Parameter]
    public SwitchParameter NoMount { get; set; }

    /// <summary>Windows: let backup products copy the cache folder (by default it is listed in FilesNotToBackup). No effect on Linux.</summary>
    [Parameter]
    public SwitchParameter IncludeCacheInBackup { get; set; }

    /// <summary>
    /// Names compare case-insensitively: keys in lower case, the name as written in metadata. Left out: on for Windows drives,
    /// off on Linux; -CaseInsensitive:$false makes a case-sensitive drive on Windows. Fixed once the drive exists.
    /// </summary>
    [Parameter]
    public SwitchParameter CaseInsensitive { get; set; }
    /// <summary>The peer listeners (http://host:port) of the other sites' drives on the same bucket and prefix: told of this drive's uploads, renames and deletes.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string[] Peer { get; set; } = [];

    /// <summary>address:port where this drive hears its peers (e.g. 0.0.0.0:7701; a port alone listens on 127.0.0.1). Off when left out.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string PeerListen { get; set; } = "";

    /// <summary>The key every site of the drive shares, signing its notices (16 characters or more); kept only by the service, in its protected store.</summary>
    [Parameter]
    [ValidateNotNull]
    public System.Security.SecureString? PeerKey { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        var cachePath = ResolveLocalPath(CachePath);
        var mountPath = MountPath.Length == 0 ? "" : ResolveLocalPath(MountPath);
        var target = $"{Name} (bucket '{Bucket}' at {string.Join(", ", Endpoint)}, cache {cachePath}, {(mountPath.Length == 0 ? "served in place" : "mount " + mountPath)})";
        if (!ShouldProcess(target, NoMount ? "Create cloud drive" : "Create and mount cloud drive"))
        {
            return;
        }

        var request = new NewDriveRequest
        {
            Name = Name,
            CachePath = cachePath,
            MountPath = mountPath,
            Endpoint = Endpoint[0],
            AdditionalEndpoints = Endpoint[1..],
            Bucket = Bucket,
            Prefix = Prefix,
            PolicyPaths = PolicyPath.Where(p => !string.IsNullOrWhiteSpace(p)).Select(ResolveLocalPath).ToArray(),
            AccessKey = ParameterSetName == CredentialSet ? Credential.UserName : "",
            SecretKey = ParameterSetName == CredentialSet ? Credential.GetNetworkCredential().Password : "",
            ProfileName = ParameterSetName == ProfileSet ? ProfileName : null,
            ProfileLocation = ParameterSetName == ProfileSet && ProfileLocation.Length > 0 ? ResolveLocalPath(ProfileLocation) : null,
            Region = Region,
            Mount = !NoMount,
            IncludeCacheInBackup = IncludeCacheInBackup,
            CaseInsensitive = MyInvocation.BoundParameters.ContainsKey(nameof(CaseInsensitive)) ? CaseInsensitive.IsPresent : null,
            Peers = Peer,
            PeerListen = PeerListen.Length == 0 ? null : PeerListen,
            PeerKey = PeerKey is null ? null : new System.Net.NetworkCredential("", PeerKey).Password,
        };
        // A refused drive leaves nothing to go on with: terminating, so `$ErrorActionPreference` need not be Stop.
        try
        {
            var drive = Call((c, ct) => c.NewDriveAsync(request, ct));
            // Said once, at creation: what works less well with this bucket (one that keeps no versions, say).
            foreach (var warning in drive.Warnings)
            {
                WriteWarning(warning);
            }
            WriteObject(drive);
        }
        catch (Core.Errors.GeoDriveException ex)
        {
            ThrowTerminatingError(ToErrorRecord(ex, Name));
        }
    }
}
