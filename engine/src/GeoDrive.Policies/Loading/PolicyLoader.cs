using GeoDrive.Core.Errors;
using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Loading;

/// <summary>
/// Reads policy files (format v1, docs/architecture.md, "Policies"). A file with any problem is refused whole: Load and
/// Parse throw <see cref="PolicyException"/> describing the first problem and carrying all of them;
/// Validate returns all of them, for Test-CloudPolicy and CI checks of a policy repository.
/// </summary>
public static class PolicyLoader
{
    /// <summary>Loads and validates one policy file.</summary>
    /// <exception cref="PolicyException">The file is missing, unreadable or not a valid policy.</exception>
    public static PolicyDocument Load(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var text = ReadFile(path, out var problem);
        return text is null ? throw new PolicyException(problem!) : Parse(text, path);
    }

    /// <summary>Validates in-memory YAML; <paramref name="fileName"/> is only used in messages and origins.</summary>
    /// <exception cref="PolicyException">The text is not a valid policy.</exception>
    public static PolicyDocument Parse(string yamlText, string fileName)
    {
        ArgumentNullException.ThrowIfNull(yamlText);
        ArgumentNullException.ThrowIfNull(fileName);
        var (document, problems) = PolicyReader.Read(yamlText, fileName);
        return problems.Count > 0 ? throw new PolicyException(problems) : document!;
    }

    /// <summary>Every problem in a policy file, in file order; empty when the file is valid. Never throws for a bad file.</summary>
    public static IReadOnlyList<PolicyProblem> Validate(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var text = ReadFile(path, out var problem);
        return text is null ? [problem!] : PolicyReader.Read(text, path).Problems;
    }

    /// <summary>Every problem in in-memory YAML, in order; empty when it is valid.</summary>
    public static IReadOnlyList<PolicyProblem> ValidateText(string yamlText, string fileName)
    {
        ArgumentNullException.ThrowIfNull(yamlText);
        ArgumentNullException.ThrowIfNull(fileName);
        return PolicyReader.Read(yamlText, fileName).Problems;
    }

    private static string? ReadFile(string path, out PolicyProblem? problem)
    {
        problem = null;
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
        {
            problem = new PolicyProblem(ErrorIds.PolicyFileNotFound, path, 0, 0, "the policy file does not exist",
                "Check the path; policy paths are resolved from the service's working folder unless absolute.");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            problem = new PolicyProblem(ErrorIds.PolicyFileNotFound, path, 0, 0, $"the policy file cannot be read: {ex.Message}",
                "Check that the path names a file and that the service account may read it.");
        }
        return null;
    }
}
