using System.Management.Automation;

namespace GeoDrive.Commands;

/// <summary>
/// Cmdlets that act on files of one drive: -Drive, and -Path (patterns) or -LiteralPath, all bound
/// from a CloudFileInfo on the pipeline.
/// </summary>
public abstract class DrivePathCmdlet : GeoDriveCmdlet
{
    protected const string PathSet = "Path";
    protected const string LiteralPathSet = "LiteralPath";

    #region Parameters

    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string Drive { get; set; } = "";

    [Parameter(Mandatory = true, Position = 0, ValueFromPipelineByPropertyName = true, ParameterSetName = PathSet)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    [Parameter(Mandatory = true, ParameterSetName = LiteralPathSet)]
    [Alias("PSPath")]
    [ValidateNotNullOrEmpty]
    public string[] LiteralPath { get; set; } = [];

    #endregion

    /// <summary>True when the paths were given with -LiteralPath.</summary>
    protected bool IsLiteral => ParameterSetName == LiteralPathSet;

    /// <summary>The paths as given, whichever parameter carried them.</summary>
    protected string[] GivenPaths => IsLiteral ? LiteralPath : Path;
}
