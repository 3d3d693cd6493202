using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Pauses a drive's uploads (files keep working and collect as Dirty) until Resume-CloudDrive; kept across restarts.</summary>
[Cmdlet(VerbsLifecycle.Suspend, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class SuspendCloudDriveCommand : DriveStateCmdlet
{
    protected override string Action => "Suspend uploads of cloud drive";

    protected override Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken) =>
        client.SuspendDriveAsync(name, cancellationToken);
}
