using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace GeoDrive.Policies.Model;

/// <summary>
/// Variables in metadata tag values, filled in per file at upload: <c>${name}</c> (file name),
/// <c>${extension}</c> (without the dot, lower case), <c>${path}</c> (drive-relative), <c>${folder}</c>
/// (its folder, "" at the root), <c>${mtime}</c> (last write, UTC, ISO 8601) and <c>${host}</c> (this machine).
/// </summary>
public static partial class TagVariables
{
    public static readonly IReadOnlyList<string> Names = ["name", "extension", "path", "folder", "mtime", "host"];

    public static string List => string.Join(", ", Names.Select(n => "${" + n + "}"));

    /// <summary>The first variable in <paramref name="value"/> that does not exist, or null.</summary>
    public static string? Unknown(string value) =>
        Variable().Matches(value).Select(m => m.Groups[1].Value).FirstOrDefault(n => !Names.Contains(n, StringComparer.Ordinal));

    /// <summary>The value without its variables (to check the literal text S3 will carry).</summary>
    public static string Strip(string value) => Variable().Replace(value, "");

    /// <summary>
    /// The value with its variables filled in for one file. Filled-in text is percent-encoded outside
    /// printable ASCII, because S3 user metadata travels in HTTP headers.
    /// </summary>
    public static string Expand(string value, string path, DateTimeOffset modifiedUtc, string host) =>
        Variable().Replace(value, m => HeaderSafe(m.Groups[1].Value switch
        {
            "name" => Path.GetFileName(path),
            "extension" => Path.GetExtension(path).TrimStart('.').ToLowerInvariant(),
            "path" => path,
            "folder" => path.Contains('/', StringComparison.Ordinal) ? path[..path.LastIndexOf('/')] : "",
            "mtime" => modifiedUtc.UtcDateTime.ToString("yyyy-MM-ddTHH:mm:ssZ", CultureInfo.InvariantCulture),
            "host" => host,
            _ => m.Value,
        }));

    private static string HeaderSafe(string text)
    {
        var safe = new StringBuilder(text.Length);
        foreach (var b in Encoding.UTF8.GetBytes(text))
        {
            if (b is >= 0x20 and < 0x7F && b != (byte)'%')
            {
                safe.Append((char)b);
            }
            else
            {
                safe.Append('%').Append(b.ToString("X2", CultureInfo.InvariantCulture));
            }
        }
        return safe.ToString();
    }

    [GeneratedRegex(@"\$\{([^}]*)\}", RegexOptions.CultureInvariant)]
    private static partial Regex Variable();
}
