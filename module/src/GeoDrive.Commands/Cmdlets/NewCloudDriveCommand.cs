using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Creates a cloud drive: a local cache folder in front of an S3 bucket, mounted at a path.</summary>
[Cmdlet(VerbsCommon.New, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class NewCloudDriveCommand : GeoDriveCmdlet
{
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

    /// <summary>The S3 endpoint, e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:9000.</summary>
    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string Endpoint { get; set; } = "";

    [Parameter(Mandatory = true)]
    [ValidateNotNullOrEmpty]
    public string Bucket { get; set; } = "";

    /// <summary>Key prefix inside the bucket under which the drive's objects live.</summary>
    [Parameter]
    public string Prefix { get; set; } = "";

    /// <summary>UserName = access key id, Password = secret access key.</summary>
    [Parameter(Mandatory = true)]
    [Credential]
    [ValidateNotNull]
    public PSCredential Credential { get; set; } = PSCredential.Empty;

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

    #endregion

    protected override void ProcessRecord()
    {
        var cachePath = ResolveLocalPath(CachePath);
        var mountPath = MountPath.Length == 0 ? "" : ResolveLocalPath(MountPath);
        var target = $"{Name} (bucket '{Bucket}' at {Endpoint}, cache {cachePath}, {(mountPath.Length == 0 ? "served in place" : "mount " + mountPath)})";
        if (!ShouldProcess(target, NoMount ? "Create cloud drive" : "Create and mount cloud drive"))
        {
            return;
        }

        var request = new NewDriveRequest
        {
            Name = Name,
            CachePath = cachePath,
            MountPath = mountPath,
            Endpoint = Endpoint,
            Bucket = Bucket,
            Prefix = Prefix,
            PolicyPaths = PolicyPath.Where(p => !string.IsNullOrWhiteSpace(p)).Select(ResolveLocalPath).ToArray(),
            AccessKey = Credential.UserName,
            SecretKey = Credential.GetNetworkCredential().Password,
            Region = Region,
            Mount = !NoMount,
            IncludeCacheInBackup = IncludeCacheInBackup,
        };
        // A refused drive leaves nothing to go on with: terminating, so `$ErrorActionPreference` need not be Stop.
        try
        {
            WriteObject(Call((c, ct) => c.NewDriveAsync(request, ct)));
        }
        catch (Core.Errors.GeoDriveException ex)
        {
            ThrowTerminatingError(ToErrorRecord(ex, Name));
        }
    }
}
