using System.Management.Automation;

namespace GeoDrive.Commands;

internal static class Wildcards
{
    /// <summary>True for PowerShell wildcards and the drive globs the service expands ('**', '{a,b}').</summary>
    public static bool IsPattern(string path) =>
        WildcardPattern.ContainsWildcardCharacters(path) || path.Contains('{', StringComparison.Ordinal);

    /// <summary>Drive names: PowerShell wildcards, case-insensitive.</summary>
    public static WildcardPattern Name(string pattern) => new(pattern, WildcardOptions.IgnoreCase);
}
