using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Resumes the uploads of a suspended drive; what collected meanwhile goes up at once.</summary>
[Cmdlet(VerbsLifecycle.Resume, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(DriveInfo))]
public sealed class ResumeCloudDriveCommand : DriveStateCmdlet
{
    protected override string Action => "Resume uploads of cloud drive";

    protected override Task<DriveInfo> SendAsync(GeoDriveClient client, string name, CancellationToken cancellationToken) =>
        client.ResumeDriveAsync(name, cancellationToken);
}
