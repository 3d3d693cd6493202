using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>Lists cloud drives, with their mount state and file counts.</summary>
[Cmdlet(VerbsCommon.Get, "CloudDrive")]
[OutputType(typeof(DriveInfo))]
public sealed class GetCloudDriveCommand : GeoDriveCmdlet
{
    #region Parameters

    [Parameter(Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Name { get; set; } = ["*"];

    #endregion

    protected override void ProcessRecord()
    {
        DriveInfo[]? all = null;
        foreach (var name in Name)
        {
            Try(name, () =>
            {
                if (Wildcards.IsPattern(name))
                {
                    all ??= Call((c, ct) => c.GetDrivesAsync(ct));
                    var pattern = Wildcards.Name(name);
                    foreach (var drive in all.Where(d => pattern.IsMatch(d.Name)).OrderBy(d => d.Name, StringComparer.OrdinalIgnoreCase))
                    {
                        WriteObject(drive);
                    }
                    return;
                }
                var found = Call((c, ct) => c.GetDriveAsync(name, ct));
                if (found is null)
                {
                    throw new GeoDriveException(ErrorIds.DriveNotFound, ErrorKind.ObjectNotFound,
                        Messages.DriveNotFound(name), Messages.DriveNotFoundRemedy);
                }
                WriteObject(found);
            });
        }
    }
}
