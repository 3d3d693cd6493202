using System.Text;
using System.Text.RegularExpressions;

namespace GeoDrive.Engine.Files;

/// <summary>
/// The wildcard patterns of Get-CloudFile -Path and Invoke-ForceStub -Path: '*' and '?' within a
/// name, '**' across folders. A pattern without '/' matches a file name at any depth ("*.pdf"),
/// as in policies; one with '/' matches the whole drive-relative path. Case-insensitive.
/// A literal query matches exactly one path.
/// </summary>
public sealed class FileQuery
{
    private readonly Regex? _regex;
    private readonly string? _literal;
    private readonly bool _nameOnly;

    public FileQuery(string pattern, bool literal = false)
    {
        var p = pattern.Replace('\\', '/').Trim('/');
        if (literal || !HasWildcards(p))
        {
            _literal = p;
            return;
        }
        _nameOnly = !p.Contains('/', StringComparison.Ordinal);
        _regex = new Regex("^" + Translate(p) + "$", RegexOptions.IgnoreCase | RegexOptions.CultureInvariant | RegexOptions.NonBacktracking);
    }

    public static bool HasWildcards(string pattern) => pattern.AsSpan().IndexOfAny('*', '?') >= 0;

    public bool Matches(string path)
    {
        if (_literal is not null)
        {
            return string.Equals(path, _literal, StringComparison.Ordinal);
        }
        var subject = _nameOnly ? path[(path.LastIndexOf('/') + 1)..] : path;
        return _regex!.IsMatch(subject);
    }

    private static string Translate(string pattern)
    {
        var sb = new StringBuilder();
        for (var i = 0; i < pattern.Length; i++)
        {
            var c = pattern[i];
            if (c == '*' && i + 1 < pattern.Length && pattern[i + 1] == '*')
            {
                i++;
                if (i + 1 < pattern.Length && pattern[i + 1] == '/')
                {
                    i++;
                    sb.Append("(?:.*/)?");
                }
                else
                {
                    sb.Append(".*");
                }
            }
            else if (c == '*')
            {
                sb.Append("[^/]*");
            }
            else if (c == '?')
            {
                sb.Append("[^/]");
            }
            else
            {
                sb.Append(Regex.Escape(c.ToString()));
            }
        }
        return sb.ToString();
    }
}
