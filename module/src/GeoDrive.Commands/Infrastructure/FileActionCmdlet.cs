using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// The shape Invoke-ForceStub and Invoke-ForceUpload share: a drive, paths or literal paths (both
/// bind from a CloudFileInfo), one ShouldProcess per path, one request per pipeline record, and a
/// non-terminating error for each file the service could not act on.
/// </summary>
public abstract class FileActionCmdlet : DrivePathCmdlet
{
    #region Parameters

    /// <summary>Return one FileActionResult per file.</summary>
    [Parameter]
    public SwitchParameter PassThru { get; set; }

    #endregion

    protected abstract string Action { get; }

    protected abstract Task<FileActionResult[]> SendAsync(GeoDriveClient client, string drive, FileActionRequest request, CancellationToken cancellationToken);

    protected abstract bool Confirm(string target, bool pattern);

    protected override void ProcessRecord()
    {
        var literal = IsLiteral;
        var approved = GivenPaths
            .Where(p => Confirm($"{p} on drive {Drive}", !literal && Wildcards.IsPattern(p)))
            .ToArray();
        if (approved.Length == 0)
        {
            return;
        }

        Try(Drive, () =>
        {
            var request = new FileActionRequest { Paths = approved, Literal = literal };
            foreach (var result in Call((c, ct) => SendAsync(c, Drive, request, ct)))
            {
                if (!result.Succeeded)
                {
                    var id = string.IsNullOrEmpty(result.ErrorId) ? ErrorIds.InvalidRequest : result.ErrorId;
                    WriteError(NewError(id, KindOf(id),
                        Messages.FileActionFailed(Action, result.Path, result.Drive, result.Message ?? result.State), "", result));
                }
                if (PassThru)
                {
                    WriteObject(result);
                }
            }
        });
    }

    private static ErrorKind KindOf(string errorId) => errorId switch
    {
        ErrorIds.FileNotFound or ErrorIds.DriveNotFound or ErrorIds.ObjectNotFound => ErrorKind.ObjectNotFound,
        ErrorIds.FileBusy or ErrorIds.LateWritePossible or ErrorIds.DriveNotMounted => ErrorKind.ResourceUnavailable,
        ErrorIds.FileNotUploaded or ErrorIds.FileExcluded or ErrorIds.RecallDenied => ErrorKind.InvalidOperation,
        ErrorIds.AccessDenied or ErrorIds.CredentialsRejected => ErrorKind.PermissionDenied,
        ErrorIds.EndpointUnreachable => ErrorKind.ConnectionError,
        ErrorIds.ObjectMismatch => ErrorKind.InvalidData,
        _ => ErrorKind.NotSpecified,
    };
}
