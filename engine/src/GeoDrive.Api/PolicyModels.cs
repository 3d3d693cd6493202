namespace GeoDrive.Api;

/// <summary>One policy file of a drive, as Get-CloudPolicy shows it.</summary>
public sealed class PolicyFileInfo
{
    public required string Drive { get; init; }
    /// <summary>1-based place in the drive's layer order: later files override single values of earlier ones.</summary>
    public int Order { get; init; }
    public required string Path { get; init; }
    /// <summary>metadata.name of the file, when it can be read.</summary>
    public string? PolicyName { get; init; }
    /// <summary>InForce, Changed (edited since the policy in force was loaded), Invalid (refused now; the last good policy stays), Missing, NotLoaded (the drive is not running).</summary>
    public required string Status { get; init; }
    /// <summary>When the policy in force was loaded (null when the drive is not running).</summary>
    public DateTimeOffset? LoadedAt { get; init; }
    /// <summary>The file's last change on disk.</summary>
    public DateTimeOffset? Modified { get; init; }
    /// <summary>The first problem ("file:line:column: message") when the file is refused now, and how many there are.</summary>
    public string? Problem { get; init; }
    public string? ErrorId { get; init; }
    public int ProblemCount { get; init; }
}

/// <summary>One setting of a drive's merged policy (Get-CloudPolicy -Effective) and where its value was written.</summary>
public sealed class PolicySettingInfo
{
    public required string Drive { get; init; }
    /// <summary>The key, e.g. spec.stubbing.accessWait, or spec.excludes[2] for a list entry.</summary>
    public required string Setting { get; init; }
    public required string Value { get; init; }
    /// <summary>"file:line:column", or "(default)" for a built-in default.</summary>
    public required string Source { get; init; }
    /// <summary>metadata.name of the file the value came from; null for a default.</summary>
    public string? Policy { get; init; }
    public string? File { get; init; }
    public int Line { get; init; }
}

/// <summary>What the policy decides for one path of a drive, with the reasons (Get-CloudPolicyDecision).</summary>
public sealed class PolicyDecisionInfo
{
    public required string Drive { get; init; }
    public required string Path { get; init; }
    /// <summary>The file's state in the drive's index, or null when the index does not know the path.</summary>
    public string? State { get; init; }
    public DateTimeOffset? LastAccess { get; init; }
    public bool Excluded { get; init; }
    public bool Pinned { get; init; }
    public bool StubbingEnabled { get; init; }
    public TimeSpan AccessWait { get; init; }
    /// <summary>When the access wait lets the file be stubbed (last access + access wait); null when it never will or is not Cached yet.</summary>
    public DateTimeOffset? StubAfter { get; init; }
    /// <summary>The stubbing outlook in words ("at …", "never: pinned", "after its upload", "already stubbed").</summary>
    public required string Stubbing { get; init; }
    public Dictionary<string, string> Tags { get; init; } = [];
    /// <summary>The process asked about (-Process), else null; then the four treatments below are its.</summary>
    public string? Process { get; init; }
    public string? FolderSync { get; init; }
    public string? FileSync { get; init; }
    public string? FileNotFound { get; init; }
    public string? Recall { get; init; }
    /// <summary>Every answer with the rule, file and line that decided it.</summary>
    public PolicyReasonInfo[] Reasons { get; init; } = [];
}

/// <summary>One answer of a decision and what decided it.</summary>
public sealed class PolicyReasonInfo
{
    /// <summary>Excluded, Pinned, AccessWait, Stubbing, Tag department, FolderSync, FileSync, FileNotFound, Recall.</summary>
    public required string Question { get; init; }
    public required string Answer { get; init; }
    /// <summary>The rule in words: "excluded by '**/*.tmp'", "the built-in default".</summary>
    public required string Reason { get; init; }
    /// <summary>"file:line:column", or "(default)".</summary>
    public required string Source { get; init; }
    public string? Policy { get; init; }
    public string? File { get; init; }
    public int Line { get; init; }
}
