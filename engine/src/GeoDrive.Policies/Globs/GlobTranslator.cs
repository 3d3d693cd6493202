using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace GeoDrive.Policies.Globs;

/// <summary>Turns a glob into an anchored regular expression over a '/'-separated path.</summary>
internal static class GlobTranslator
{
    internal readonly record struct Translation(string Regex, bool IsFolderPattern, bool MatchesAnyDepth);

    // One segment never crosses a '/'; "[^/]" is used wherever a glob means "any character".
    private const string AnyChar = "[^/]";

    public static bool TryTranslate(string pattern, out Translation translation, [NotNullWhen(false)] out string? error)
    {
        translation = default;
        if (string.IsNullOrWhiteSpace(pattern))
        {
            error = "it is empty";
            return false;
        }
        if (pattern.Contains('\\', StringComparison.Ordinal))
        {
            error = "it contains '\\'; separate folders with '/' (to match '[' or '*' literally, write '[[]' or '[*]')";
            return false;
        }
        if (pattern.Any(char.IsControl))
        {
            error = "it contains a control character";
            return false;
        }

        var isFolder = pattern.EndsWith('/');
        // A leading '/' only says "from the drive root", which every pattern with a '/' already is.
        var body = pattern.Trim('/');
        if (body.Length == 0)
        {
            error = "it names no path ('/' alone would match the whole drive; write '**' for that)";
            return false;
        }
        var anyDepth = !pattern.Contains('/', StringComparison.Ordinal);
        var segments = body.Split('/');
        if (segments.Any(s => s.Length == 0))
        {
            error = "it contains an empty folder name ('//')";
            return false;
        }
        if (segments.Any(s => s is "." or ".."))
        {
            error = "it contains '.' or '..'; paths are relative to the drive root and cannot leave it";
            return false;
        }
        if (!CheckBrackets(body, out error))
        {
            return false;
        }

        var sb = new StringBuilder("^");
        if (anyDepth)
        {
            sb.Append("(?:.*/)?");
        }
        var separatorPending = false;
        var lastWasGlobstar = false;
        for (var i = 0; i < segments.Length; i++)
        {
            var segment = segments[i];
            var isLast = i == segments.Length - 1;
            if (segment == "**")
            {
                if (lastWasGlobstar)
                {
                    continue; // "**/**" means the same as "**".
                }
                lastWasGlobstar = true;
                if (i == 0 && isLast)
                {
                    sb.Append(".*");
                }
                else if (i == 0)
                {
                    sb.Append("(?:[^/]+/)*"); // zero or more leading folders, each followed by its '/'
                }
                else
                {
                    sb.Append("(?:/[^/]+)*"); // zero or more further segments after what came before
                    separatorPending = !isLast;
                }
                continue;
            }
            if (i > 0 && (!lastWasGlobstar || separatorPending))
            {
                sb.Append('/');
            }
            separatorPending = false;
            lastWasGlobstar = false;
            var pos = 0;
            TranslatePart(segment, ref pos, sb, insideBraces: false);
        }
        sb.Append('$');
        translation = new Translation(sb.ToString(), isFolder, anyDepth);
        error = null;
        return true;
    }

    // Reports unclosed '[' and '{' (and a '/' inside them) before translating, with the position a reader can find.
    private static bool CheckBrackets(string body, [NotNullWhen(false)] out string? error)
    {
        var braceDepth = 0;
        var braceStart = -1;
        for (var i = 0; i < body.Length; i++)
        {
            var c = body[i];
            if (c == '[')
            {
                var close = ClassEnd(body, i);
                if (close < 0)
                {
                    error = $"the '[' at position {i + 1} is never closed with ']'";
                    return false;
                }
                if (body.AsSpan(i, close - i).Contains('/'))
                {
                    error = $"the character class at position {i + 1} contains '/', which a class can never match";
                    return false;
                }
                i = close;
            }
            else if (c == '{')
            {
                if (braceDepth == 0)
                {
                    braceStart = i;
                }
                braceDepth++;
            }
            else if (c == '}')
            {
                if (braceDepth == 0)
                {
                    error = $"the '}}' at position {i + 1} has no '{{' before it";
                    return false;
                }
                braceDepth--;
            }
            else if (c == '/' && braceDepth > 0)
            {
                error = $"the alternation at position {braceStart + 1} contains '/'; write the whole paths as separate patterns instead";
                return false;
            }
        }
        if (braceDepth > 0)
        {
            error = $"the '{{' at position {braceStart + 1} is never closed with '}}'";
            return false;
        }
        error = null;
        return true;
    }

    // Index of the ']' that closes the class opening at 'open', or -1. A ']' right after '[' or '[!' is a literal.
    private static int ClassEnd(string s, int open)
    {
        var i = open + 1;
        if (i < s.Length && (s[i] == '!' || s[i] == '^'))
        {
            i++;
        }
        if (i < s.Length && s[i] == ']')
        {
            i++;
        }
        for (; i < s.Length; i++)
        {
            if (s[i] == ']')
            {
                return i;
            }
        }
        return -1;
    }

    // Brackets were checked already, so this only has to translate; it stops at ',' or '}' inside an alternation.
    private static void TranslatePart(string s, ref int pos, StringBuilder sb, bool insideBraces)
    {
        while (pos < s.Length)
        {
            var c = s[pos];
            if (insideBraces && (c == ',' || c == '}'))
            {
                return;
            }
            switch (c)
            {
                case '*':
                    while (pos < s.Length && s[pos] == '*')
                    {
                        pos++; // "a**b" inside a segment means the same as "a*b".
                    }
                    sb.Append(AnyChar).Append('*');
                    continue;
                case '?':
                    sb.Append(AnyChar);
                    break;
                case '[':
                    {
                        var close = ClassEnd(s, pos);
                        AppendClass(s.AsSpan(pos + 1, close - pos - 1), sb);
                        pos = close;
                        break;
                    }
                case '{':
                    pos++;
                    sb.Append("(?:");
                    while (true)
                    {
                        TranslatePart(s, ref pos, sb, insideBraces: true);
                        if (s[pos] == '}')
                        {
                            break;
                        }
                        sb.Append('|');
                        pos++;
                    }
                    sb.Append(')');
                    break;
                default:
                    sb.Append(System.Text.RegularExpressions.Regex.Escape(c.ToString()));
                    break;
            }
            pos++;
        }
    }

    private static void AppendClass(ReadOnlySpan<char> content, StringBuilder sb)
    {
        var negate = content.Length > 0 && (content[0] == '!' || content[0] == '^');
        if (negate)
        {
            content = content[1..];
        }
        sb.Append(negate ? "[^" : "[");
        foreach (var ch in content)
        {
            // Inside a regex class only these are special; '-' stays special on purpose (ranges).
            if (ch is '\\' or ']' or '[' or '^')
            {
                sb.Append('\\');
            }
            sb.Append(ch);
        }
        // A negated class must still stay inside one segment.
        sb.Append(negate ? "/]" : "]");
    }
}
