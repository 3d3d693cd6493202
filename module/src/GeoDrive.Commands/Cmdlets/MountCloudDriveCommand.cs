using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Mounts a cloud drive at its mount path, so applications see its files.</summary>
[Cmdlet(VerbsData.Mount, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class MountCloudDriveCommand : DriveStateCmdlet
{
    protected override string Action => "Mount cloud drive";

    protected override Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken) =>
        client.MountDriveAsync(name, cancellationToken);
}
