using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>Lists a drive's files with their state (Dirty, Cached, Stubbed …), size and times.</summary>
[Cmdlet(VerbsCommon.Get, "CloudFile", DefaultParameterSetName = PathSet)]
[OutputType(typeof(CloudFileInfo))]
public sealed class GetCloudFileCommand : GeoDriveCmdlet
{
    private const string PathSet = "Path";
    private const string LiteralPathSet = "LiteralPath";

    #region Parameters

    /// <summary>The drive; binds from a DriveInfo's Name (Get-CloudDrive | Get-CloudFile).</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    /// <summary>Drive-relative paths or patterns ('*' within a folder, '**' across folders); the service expands them.</summary>
    [Parameter(Position = 0, ParameterSetName = PathSet)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = ["**"];

    [Parameter(Mandatory = true, ParameterSetName = LiteralPathSet)]
    [Alias("PSPath")]
    [ValidateNotNullOrEmpty]
    public string[] LiteralPath { get; set; } = [];

    #endregion

    protected override void ProcessRecord()
    {
        var literal = ParameterSetName == LiteralPathSet;
        foreach (var path in literal ? LiteralPath : Path)
        {
            Try(path, () =>
            {
                var pattern = Wildcards.IsPattern(path);
                var files = Call((c, ct) => c.GetFilesAsync(Drive, path, ct));
                if (literal && pattern)
                {
                    // The files route always expands patterns: keep only the file literally named.
                    files = files.Where(f => string.Equals(f.Path.TrimStart('/'), path.TrimStart('/'), StringComparison.OrdinalIgnoreCase)).ToArray();
                }
                if (files.Length == 0 && (literal || !pattern))
                {
                    throw new GeoDriveException(ErrorIds.FileNotFound, ErrorKind.ObjectNotFound,
                        Messages.FileNotFound(path, Drive), Messages.FileNotFoundRemedy(Drive));
                }
                WriteObject(files, enumerateCollection: true);
            });
        }
    }
}
