using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// Pins files (kept local, never stubbed; a stub is recalled now) or unpins them (stubbed again when
/// the policy says so).
/// </summary>
[Cmdlet(VerbsCommon.Set, "CloudFile", DefaultParameterSetName = PathSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(CloudFileInfo))]
public sealed class SetCloudFileCommand : DrivePathCmdlet
{
    #region Parameters

    /// <summary>Keep the files local: never stubbed; a stub is recalled now.</summary>
    [Parameter]
    public SwitchParameter Pin { get; set; }

    /// <summary>Remove the pin set by -Pin: the policy decides again.</summary>
    [Parameter]
    public SwitchParameter Unpin { get; set; }

    /// <summary>Return the files as Get-CloudFile shows them after the change.</summary>
    [Parameter]
    public SwitchParameter PassThru { get; set; }

    #endregion

    protected override void BeginProcessing()
    {
        if (Pin.IsPresent == Unpin.IsPresent)
        {
            ThrowTerminatingError(NewError(ModuleErrorIds.PinOrUnpin, ErrorKind.InvalidArgument,
                Messages.PinOrUnpin, Messages.PinOrUnpinRemedy, null));
        }
    }

    protected override void ProcessRecord()
    {
        var pinned = Pin.IsPresent;
        var literal = IsLiteral;
        var approved = GivenPaths
            .Where(p => ShouldProcess($"{p} on drive {Drive}", pinned ? "Pin (keep local; recall a stub now)" : "Unpin (stubbed again as the policy says)"))
            .ToArray();
        if (approved.Length == 0)
        {
            return;
        }

        Try(Drive, () =>
        {
            var request = new FileActionRequest { Paths = approved, Literal = literal };
            foreach (var result in Call((c, ct) => c.SetPinnedAsync(Drive, request, pinned, ct)))
            {
                if (!result.Succeeded)
                {
                    var id = string.IsNullOrEmpty(result.ErrorId) ? ErrorIds.InvalidRequest : result.ErrorId;
                    var kind = id == ErrorIds.FileNotFound ? ErrorKind.ObjectNotFound : id is ErrorIds.EndpointUnreachable ? ErrorKind.ConnectionError : ErrorKind.InvalidOperation;
                    WriteError(NewError(id, kind, Messages.FileActionFailed(pinned ? "Pin" : "Unpin", result.Path, result.Drive, result.Message ?? result.State), "", result));
                    continue;
                }
                if (PassThru)
                {
                    var files = Call((c, ct) => c.GetFilesAsync(Drive, result.Path, ct));
                    WriteObject(files.Where(f => string.Equals(f.Path, result.Path, StringComparison.Ordinal)), enumerateCollection: true);
                }
            }
        });
    }
}
