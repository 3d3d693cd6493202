using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;

namespace GeoDrive.Policies.Globs;

/// <summary>
/// A path pattern from a policy, compiled once. Paths are relative to the drive root and '/'-separated.
/// <list type="bullet">
/// <item><c>*</c> any characters within one segment, <c>?</c> one character, <c>[a-z]</c> / <c>[!0-9]</c> a character class,
/// <c>{pdf,docx}</c> alternation, <c>**</c> as a whole segment: any number of segments (zero included).</item>
/// <item>A pattern without '/' matches a name at any depth ("Thumbs.db", "*.tmp").</item>
/// <item>A trailing '/' means a folder (never a file of that name); a folder pattern therefore covers everything under it.</item>
/// </list>
/// Matching is case-insensitive unless asked otherwise, because the drives are shared with Windows clients.
/// </summary>
public sealed class Glob
{
    private static readonly TimeSpan MatchTimeout = TimeSpan.FromSeconds(1);

    private readonly Regex _regex;

    // The pattern followed by '/' or the end: it names the path or one of the folders it is in, in one match.
    private readonly Regex _appliesRegex;

    // For folder patterns and a file: only the folders it is in (the pattern followed by '/').
    private readonly Regex _appliesToFileRegex;

    private Glob(string pattern, Regex regex, Regex appliesRegex, Regex appliesToFileRegex, bool isFolderPattern, bool matchesAnyDepth)
    {
        Pattern = pattern;
        _regex = regex;
        _appliesRegex = appliesRegex;
        _appliesToFileRegex = appliesToFileRegex;
        IsFolderPattern = isFolderPattern;
        MatchesAnyDepth = matchesAnyDepth;
    }

    /// <summary>The pattern as written in the policy.</summary>
    public string Pattern { get; }

    /// <summary>True when the pattern ends in '/': it names folders only.</summary>
    public bool IsFolderPattern { get; }

    /// <summary>True when the pattern has no '/': it matches a name at any depth.</summary>
    public bool MatchesAnyDepth { get; }

    /// <summary>Compiles a pattern, or throws <see cref="FormatException"/> saying what is wrong with it.</summary>
    public static Glob Parse(string pattern, bool caseSensitive = false)
    {
        if (!TryParse(pattern, out var glob, out var error, caseSensitive))
        {
            throw new FormatException($"The path pattern '{pattern}' is not valid: {error}.");
        }
        return glob;
    }

    /// <summary>Compiles a pattern; on failure <paramref name="error"/> says what is wrong (no trailing period).</summary>
    public static bool TryParse(
        string pattern,
        [NotNullWhen(true)] out Glob? glob,
        [NotNullWhen(false)] out string? error,
        bool caseSensitive = false)
    {
        ArgumentNullException.ThrowIfNull(pattern);
        glob = null;
        if (!GlobTranslator.TryTranslate(pattern, out var translation, out error))
        {
            return false;
        }
        var options = RegexOptions.Compiled | RegexOptions.CultureInvariant | RegexOptions.ExplicitCapture;
        if (!caseSensitive)
        {
            options |= RegexOptions.IgnoreCase;
        }
        Regex regex, applies, appliesToFile;
        try
        {
            regex = new Regex(translation.Regex, options, MatchTimeout);
            var body = translation.Regex[1..^1]; // the translation is "^…$"
            applies = new Regex($"^(?:{body})(?:/|$)", options, MatchTimeout);
            appliesToFile = translation.IsFolderPattern ? new Regex($"^(?:{body})/", options, MatchTimeout) : applies;
        }
        catch (ArgumentException)
        {
            // The translator checks the shape; what remains is a class such as "[z-a]" that the regex engine refuses.
            error = "a character class in it is not valid (is a range such as 'z-a' reversed?)";
            return false;
        }
        glob = new Glob(pattern, regex, applies, appliesToFile, translation.IsFolderPattern, translation.MatchesAnyDepth);
        return true;
    }

    /// <summary>
    /// Whether the pattern names this path itself. A folder pattern ("Scratch/") names only folders,
    /// so a file called "Scratch" does not match it.
    /// </summary>
    public bool IsMatch(string path, bool isDirectory = false)
    {
        if (IsFolderPattern && !isDirectory)
        {
            return false;
        }
        return _regex.IsMatch(Trim(path));
    }

    /// <summary>
    /// Whether the pattern names this path or one of the folders it is in. This is how every policy
    /// rule applies: excluding, pinning or tagging a folder covers everything under it.
    /// </summary>
    public bool AppliesTo(string path, bool isDirectory = false) =>
        (isDirectory ? _appliesRegex : _appliesToFileRegex).IsMatch(Trim(path));

    public override string ToString() => Pattern;

    // Engine paths are already normalised; this only forgives a leading or trailing '/' from a caller.
    private static string Trim(string path) => path.Trim('/');
}
