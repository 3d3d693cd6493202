using System.Collections;
using System.Management.Automation;
using System.Management.Automation.Language;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>Tab completion of drive names, asked of the service; nothing at all when it is not running.</summary>
public sealed class DriveNameCompleter : IArgumentCompleter
{
    public IEnumerable<CompletionResult> CompleteArgument(
        string commandName, string parameterName, string wordToComplete, CommandAst commandAst, IDictionary fakeBoundParameters)
    {
        var word = (wordToComplete ?? "").Trim('\'', '"');
        DriveInfo[] drives;
        try
        {
            using var client = new GeoDriveClient(timeout: TimeSpan.FromSeconds(2));
            drives = client.GetDrivesAsync().GetAwaiter().GetResult();
        }
        catch (Exception)
        {
            // Completion must never print an error: a stopped service just completes nothing.
            return [];
        }
        var pattern = Wildcards.Name(word + "*");
        return drives
            .Where(d => pattern.IsMatch(d.Name))
            .OrderBy(d => d.Name, StringComparer.OrdinalIgnoreCase)
            .Select(d => new CompletionResult(
                d.Name.Contains(' ', StringComparison.Ordinal) ? $"'{d.Name.Replace("'", "''", StringComparison.Ordinal)}'" : d.Name,
                d.Name,
                CompletionResultType.ParameterValue,
                $"{d.Name} -> {d.Bucket} at {d.Endpoint}{(d.Mounted ? $", mounted at {d.MountPath}" : ", not mounted")}"))
            .ToList();
    }
}
