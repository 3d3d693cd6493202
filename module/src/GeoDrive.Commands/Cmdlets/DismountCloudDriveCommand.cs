using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Dismounts a cloud drive; its files stay in the cache and the bucket.</summary>
[Cmdlet(VerbsData.Dismount, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class DismountCloudDriveCommand : DriveStateCmdlet
{
    protected override string Action => "Dismount cloud drive";

    protected override Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken) =>
        client.DismountDriveAsync(name, cancellationToken);
}
