using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// Lists the versions and delete markers the bucket keeps of a file, newest first: what Restore-CloudFile
/// can bring back.
/// </summary>
[Cmdlet(VerbsCommon.Get, "CloudFileVersion")]
[OutputType(typeof(CloudFileVersionInfo))]
public sealed class GetCloudFileVersionCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>The drive; binds from a CloudFileInfo's Drive (Get-CloudFile | Get-CloudFileVersion).</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>Drive-relative paths, taken literally: a deleted file is on neither the drive nor a listing to expand a pattern against.</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true)]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    #endregion

    protected override void ProcessRecord()
    {
        foreach (var path in Path)
        {
            Try(path, () =>
            {
                var versions = Call((c, ct) => c.GetFileVersionsAsync(Drive, path, ct));
                if (versions.Length == 0)
                {
                    // A named file without a single version is an error, as Get-CloudFile's would be.
                    throw new GeoDriveException(ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
                        Messages.NoVersions(path, Drive), Messages.NoVersionsRemedy(Drive));
                }
                WriteObject(versions, enumerateCollection: true);
            });
        }
    }
}
