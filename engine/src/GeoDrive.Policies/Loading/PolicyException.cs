using GeoDrive.Core.Errors;

namespace GeoDrive.Policies.Loading;

/// <summary>
/// A policy file was refused. Describes the first problem (file:line:column: message, and a remedy);
/// <see cref="Problems"/> holds them all, because an administrator fixing a file wants the whole list.
/// </summary>
public sealed class PolicyException : GeoDriveException
{
    public PolicyException(IReadOnlyList<PolicyProblem> problems)
        : base(
            First(problems).ErrorId,
            KindOf(First(problems).ErrorId),
            Describe(problems),
            First(problems).Remedy)
    {
        Problems = problems;
        File = problems[0].File;
        Line = problems[0].Line;
        Column = problems[0].Column;
    }

    public PolicyException(PolicyProblem problem)
        : this([problem])
    {
    }

    public PolicyException()
        : this(new PolicyProblem(ErrorIds.PolicySyntax, "(unknown)", 0, 0, "The policy was refused.", "Run Test-CloudPolicy on the file."))
    {
    }

    public PolicyException(string message)
        : this(new PolicyProblem(ErrorIds.PolicySyntax, "(unknown)", 0, 0, message, "Run Test-CloudPolicy on the file."))
    {
    }

    public PolicyException(string message, Exception innerException)
        : base(ErrorIds.PolicySyntax, ErrorKind.InvalidData, message, "Run Test-CloudPolicy on the file.", innerException)
    {
        Problems = [new PolicyProblem(ErrorIds.PolicySyntax, "(unknown)", 0, 0, message, Remedy)];
        File = "(unknown)";
    }

    /// <summary>The file of the first problem.</summary>
    public string File { get; }

    /// <summary>1-based line of the first problem; 0 when it has no place in the file.</summary>
    public int Line { get; }

    /// <summary>1-based column of the first problem; 0 when it has no place in the file.</summary>
    public int Column { get; }

    /// <summary>Every problem found, in file order; the first is the one this exception describes.</summary>
    public IReadOnlyList<PolicyProblem> Problems { get; }

    private static PolicyProblem First(IReadOnlyList<PolicyProblem> problems) =>
        problems is { Count: > 0 } ? problems[0] : throw new ArgumentException("At least one problem is needed.", nameof(problems));

    private static string Describe(IReadOnlyList<PolicyProblem> problems) =>
        problems.Count == 1
            ? problems[0].Formatted
            : $"{problems[0].Formatted} (and {problems.Count - 1} more problem{(problems.Count == 2 ? "" : "s")} in the file)";

    private static ErrorKind KindOf(string errorId) =>
        errorId == ErrorIds.PolicyFileNotFound ? ErrorKind.ObjectNotFound : ErrorKind.InvalidData;
}
