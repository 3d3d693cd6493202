using System.Management.Automation;
using GeoDrive.Core.Errors;
using GeoDrive.Policies.Loading;
using Microsoft.PowerShell.Commands;

namespace GeoDrive.Commands;

/// <summary>
/// Checks policy files with the loader a drive uses, without the service: writes every problem of every
/// file as an error (id such as PolicyUnknownKey, message "file:line:column: …") and returns one $true or
/// $false for the whole run, so that a policy repository's CI can gate pull requests.
/// </summary>
[Cmdlet(VerbsDiagnostic.Test, "CloudPolicy", DefaultParameterSetName = PathSet)]
[OutputType(typeof(bool))]
public sealed class TestCloudPolicyCommand : GeoDriveCmdlet
{
    private const string PathSet = "Path";
    private const string LiteralPathSet = "LiteralPath";

    private int _checked;
    private bool _valid = true;

    #region Parameters

    /// <summary>Policy files; PowerShell wildcards (policies/*.yaml) are expanded.</summary>
    [Parameter(Mandatory = true, Position = 0, ValueFromPipeline = true, ValueFromPipelineByPropertyName = true, ParameterSetName = PathSet)]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    /// <summary>Policy files taken as written (no wildcards); binds from Get-ChildItem's output.</summary>
    [Parameter(Mandatory = true, ValueFromPipelineByPropertyName = true, ParameterSetName = LiteralPathSet)]
    [Alias("PSPath", "FullName")]
    [ValidateNotNullOrEmpty]
    public string[] LiteralPath { get; set; } = [];

    #endregion

    protected override void ProcessRecord()
    {
        var literal = ParameterSetName == LiteralPathSet;
        foreach (var path in literal ? LiteralPath : Path)
        {
            foreach (var file in Resolve(path, literal))
            {
                Check(file);
            }
        }
    }

    protected override void EndProcessing()
    {
        // A run that checked nothing proves nothing: a CI gate over a mistyped folder must not pass.
        WriteObject(_valid && _checked > 0);
        base.EndProcessing();
    }

    private void Check(string file)
    {
        _checked++;
        WriteVerbose($"Checking {file}");
        if (Directory.Exists(file))
        {
            Fail(ErrorIds.PolicyFileNotFound, ErrorKind.InvalidArgument, $"{file}: this is a folder, not a policy file.",
                $"Name the files, e.g. '{System.IO.Path.Combine(file, "*.yaml")}'.", file);
            return;
        }
        foreach (var problem in PolicyLoader.Validate(file))
        {
            var kind = problem.ErrorId == ErrorIds.PolicyFileNotFound ? ErrorKind.ObjectNotFound : ErrorKind.InvalidData;
            Fail(problem.ErrorId, kind, problem.Formatted, problem.Remedy, file);
        }
    }

    private IEnumerable<string> Resolve(string path, bool literal)
    {
        if (literal)
        {
            return [SessionState.Path.GetUnresolvedProviderPathFromPSPath(path)];
        }
        try
        {
            var resolved = GetResolvedProviderPathFromPSPath(path, out var provider);
            if (provider.ImplementingType != typeof(FileSystemProvider))
            {
                Fail(ErrorIds.PolicyFileNotFound, ErrorKind.InvalidArgument, $"'{path}' is not a file-system path.", "Give the path of a policy file.", path);
                return [];
            }
            if (resolved.Count == 0)
            {
                Fail(ErrorIds.PolicyFileNotFound, ErrorKind.ObjectNotFound, $"No policy file matches '{path}'.", "Check the path and the pattern.", path);
            }
            return resolved;
        }
        catch (ItemNotFoundException)
        {
            Fail(ErrorIds.PolicyFileNotFound, ErrorKind.ObjectNotFound, $"{path}: the policy file does not exist.", "Check the path.", path);
            return [];
        }
    }

    private void Fail(string errorId, ErrorKind kind, string message, string remedy, string target)
    {
        _valid = false;
        WriteError(NewError(errorId, kind, message, remedy, target));
    }
}
