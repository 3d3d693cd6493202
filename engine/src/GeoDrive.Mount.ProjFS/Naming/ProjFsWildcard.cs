namespace GeoDrive.Mount.ProjFS.Naming;

/// <summary>
/// The search expressions ProjFS hands to GetDirectoryEnumeration (PrjFileNameMatch semantics, the
/// FsRtlIsNameInExpression rules), case-insensitive as <see cref="ProjFsNameComparer"/>:
/// <c>*</c> any run of characters; <c>?</c> exactly one character; and the DOS forms Win32 turns
/// "*.*"-style patterns into — <c>&lt;</c> (DOS_STAR) any run up to the name's last '.',
/// <c>&gt;</c> (DOS_QM) one character, or nothing at a '.' or at the end, <c>"</c> (DOS_DOT) a '.'
/// or nothing at the end. A null or empty expression matches everything.
/// </summary>
public static class ProjFsWildcard
{
    private const char DosStar = '<';
    private const char DosQm = '>';
    private const char DosDot = '"';

    public static bool HasWildcards(string? expression) =>
        expression is not null && expression.AsSpan().IndexOfAny("*?<>\"") >= 0;

    public static bool IsMatch(string name, string? expression)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (string.IsNullOrEmpty(expression) || expression == "*")
        {
            return true;
        }
        if (!HasWildcards(expression))
        {
            return ProjFsNameComparer.Instance.Equals(name, expression);
        }
        var lastDot = name.LastIndexOf('.');
        var memo = new sbyte[(name.Length + 1) * (expression.Length + 1)];
        return Match(name, 0, expression, 0, lastDot, memo);
    }

    private static bool Match(string name, int n, string pattern, int p, int lastDot, sbyte[] memo)
    {
        var slot = (n * (pattern.Length + 1)) + p;
        if (memo[slot] != 0)
        {
            return memo[slot] > 0;
        }
        var result = MatchUncached(name, n, pattern, p, lastDot, memo);
        memo[slot] = result ? (sbyte)1 : (sbyte)-1;
        return result;
    }

    private static bool MatchUncached(string name, int n, string pattern, int p, int lastDot, sbyte[] memo)
    {
        if (p == pattern.Length)
        {
            return n == name.Length;
        }
        var token = pattern[p];
        switch (token)
        {
            case '*':
                for (var k = n; k <= name.Length; k++)
                {
                    if (Match(name, k, pattern, p + 1, lastDot, memo))
                    {
                        return true;
                    }
                }
                return false;
            case DosStar:
                // Any run that does not swallow the last '.' of the name.
                for (var k = n; k <= name.Length; k++)
                {
                    if (k > n && k - 1 == lastDot)
                    {
                        break;
                    }
                    if (Match(name, k, pattern, p + 1, lastDot, memo))
                    {
                        return true;
                    }
                }
                return false;
            case DosQm:
                if (n == name.Length || name[n] == '.')
                {
                    return Match(name, n, pattern, p + 1, lastDot, memo);
                }
                return Match(name, n + 1, pattern, p + 1, lastDot, memo);
            case DosDot:
                if (n == name.Length)
                {
                    return Match(name, n, pattern, p + 1, lastDot, memo);
                }
                return name[n] == '.' && Match(name, n + 1, pattern, p + 1, lastDot, memo);
            case '?':
                return n < name.Length && Match(name, n + 1, pattern, p + 1, lastDot, memo);
            default:
                return n < name.Length
                       && char.ToUpperInvariant(name[n]) == char.ToUpperInvariant(token)
                       && Match(name, n + 1, pattern, p + 1, lastDot, memo);
        }
    }
}
