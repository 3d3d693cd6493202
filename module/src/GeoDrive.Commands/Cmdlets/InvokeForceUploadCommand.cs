using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Uploads dirty files now instead of waiting for the policy's settle time.</summary>
[Cmdlet(VerbsLifecycle.Invoke, "ForceUpload", DefaultParameterSetName = PathSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Low)]
[OutputType(typeof(FileActionResult))]
public sealed class InvokeForceUploadCommand : FileActionCmdlet
{
    protected override string Action => "Upload";

    protected override Task<FileActionResult[]> SendAsync(GeoDriveClient client, string drive, FileActionRequest request, CancellationToken cancellationToken) =>
        client.UploadAsync(drive, request, cancellationToken);

    protected override bool Confirm(string target, bool pattern) => ShouldProcess(target, "Upload");
}
