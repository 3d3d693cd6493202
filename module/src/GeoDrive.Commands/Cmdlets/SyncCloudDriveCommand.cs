using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>
/// Syncs a drive (or the tree under one of its folders) with its bucket now: every folder is listed, top
/// down, and each file and folder the bucket has and the drive does not is made, files as stubs. What a
/// new host runs so the whole drive is there before anyone lists it; with progress, and Ctrl+C stops it.
/// </summary>
/// <remarks>ConfirmImpact Low: it only adds stubs and folders, as listing each folder through the mount would.</remarks>
[Cmdlet(VerbsData.Sync, "CloudDrive", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Low)]
[OutputType(typeof(DriveSyncInfo))]
public sealed class SyncCloudDriveCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>The drive; binds from a DriveInfo's Name (Get-CloudDrive | Sync-CloudDrive).</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>
    /// A drive-relative folder whose tree is synced (the folders above it are listed too); the whole drive
    /// when not given. Not bound from the pipeline, so a file from Get-CloudFile does not narrow it to the file.
    /// </summary>
    [Parameter]
    [ValidateNotNull]
    public string Path { get; set; } = "";

    #endregion

    protected override void ProcessRecord()
    {
        var folder = Path.Replace('\\', '/').Trim('/');
        if (!ShouldProcess(Messages.SyncTarget(folder, Drive), Messages.SyncAction))
        {
            return;
        }
        Try(Drive, () => WriteObject(SyncWithProgress(Drive, folder)));
    }
}
