namespace GeoDrive.Policies.Loading;

/// <summary>
/// One thing wrong with a policy file: a stable error id (GeoDrive.Core.Errors.ErrorIds), where (1-based
/// line and column; 0 when the problem has no place, such as a missing file), what and what to do.
/// </summary>
public sealed record PolicyProblem(string ErrorId, string File, int Line, int Column, string Message, string Remedy)
{
    /// <summary>"file:line:column: message", the form editors and CI logs turn into links.</summary>
    public string Formatted => Line > 0 ? $"{File}:{Line}:{Column}: {Message}" : $"{File}: {Message}";

    public override string ToString() => $"{Formatted} {Remedy}";
}
