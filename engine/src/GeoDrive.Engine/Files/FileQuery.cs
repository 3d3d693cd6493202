using GeoDrive.Core.Errors;
using GeoDrive.Policies.Globs;

namespace GeoDrive.Engine.Files;

/// <summary>
/// The patterns of Get-CloudFile -Path, Invoke-ForceStub -Path and the other cmdlets' -Path: the policy
/// language's globs (<see cref="Glob"/>): '*' and '?' within a name, '[a-z]' and '[!0-9]' classes, '{a,b}'
/// alternation, '**' across folders. A pattern without '/' matches a file name at any depth ("*.pdf"); one
/// with '/' matches the whole drive-relative path. Case-insensitive. A literal query (-LiteralPath) or a
/// pattern without any of those characters matches exactly one path.
/// </summary>
public sealed class FileQuery
{
    private readonly Glob? _glob;
    private readonly string? _literal;

    public FileQuery(string pattern, bool literal = false)
    {
        var p = pattern.Replace('\\', '/').Trim('/');
        if (literal || !HasWildcards(p))
        {
            _literal = p;
            return;
        }
        if (!Glob.TryParse(p, out var glob, out var error))
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                $"The path pattern '{pattern}' is not valid: {error}.",
                "Use * and ? within a name, ** across folders, [abc] or [a-z] for one character, {pdf,docx} for alternatives; or -LiteralPath for a name that holds such characters.");
        }
        _glob = glob;
    }

    public static bool HasWildcards(string pattern) => pattern.AsSpan().IndexOfAny("*?[{") >= 0;

    public bool Matches(string path) =>
        _literal is not null ? string.Equals(path, _literal, StringComparison.Ordinal) : _glob!.IsMatch(path);
}
