using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// Brings back an earlier version of a file, or a deleted file, from a bucket that keeps versions. The
/// version is copied over the file's object as a new current version (every older one stays), and the
/// drive shows the file as a stub of it.
/// </summary>
/// <remarks>
/// ConfirmImpact Medium: nothing is lost (the replaced content stays a version in the bucket, and the
/// service refuses a file whose local changes are not uploaded). Output only with -PassThru, as Set-CloudFile.
/// </remarks>
[Cmdlet(VerbsData.Restore, "CloudFile", DefaultParameterSetName = VersionSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(CloudFileInfo))]
public sealed class RestoreCloudFileCommand : GeoDriveCmdlet
{
    private const string VersionSet = "VersionId";
    private const string DeletedSet = "Deleted";

    #region Parameters

    /// <summary>The drive; binds from a CloudFileVersionInfo's Drive (Get-CloudFileVersion | Restore-CloudFile).</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>The file's drive-relative path, taken literally (a deleted file has nothing to match a pattern against).</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    public string Path { get; set; } = "";

    /// <summary>The version to bring back, as Get-CloudFileVersion lists it; with -Deleted, the one to bring a deleted file back from.</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true, ParameterSetName = VersionSet)]
    [Parameter(ValueFromPipelineByPropertyName = true, ParameterSetName = DeletedSet)]
    [ValidateNotNullOrEmpty]
    public string? VersionId { get; set; }

    /// <summary>The file was deleted: bring it back (without -VersionId, its newest version before the delete).</summary>
    [Parameter(Mandatory = true, ParameterSetName = DeletedSet)]
    public SwitchParameter Deleted { get; set; }

    /// <summary>Return the file as Get-CloudFile shows it after the restore.</summary>
    [Parameter]
    public SwitchParameter PassThru { get; set; }

    /// <summary>A version from Get-CloudFileVersion: its Drive, Path and VersionId bind by name; a delete marker is refused here.</summary>
    [Parameter(ValueFromPipeline = true)]
    public CloudFileVersionInfo? InputObject { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        // Checked before ShouldProcess, so -WhatIf says the same: a delete marker holds no data to bring back.
        if (InputObject is { IsDeleteMarker: true } marker && marker.VersionId == VersionId)
        {
            WriteError(NewError(ErrorIds.VersionNotFound, ErrorKind.InvalidArgument,
                Messages.DeleteMarkerNotRestorable(marker.VersionId, Path, Drive),
                Messages.DeleteMarkerNotRestorableRemedy(Path, Drive), marker));
            return;
        }
        if (!ShouldProcess($"{Path} on drive {Drive}", Messages.RestoreAction(VersionId, Deleted)))
        {
            return;
        }

        Try(Path, () =>
        {
            var request = new RestoreFileRequest { Path = Path, VersionId = VersionId, Deleted = Deleted };
            var restored = Call((c, ct) => c.RestoreFileAsync(Drive, request, ct));
            if (PassThru)
            {
                WriteObject(restored);
            }
        });
    }
}
