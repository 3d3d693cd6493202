namespace GeoDrive.Policies.Model;

/// <summary>
/// One policy file as written, validated and immutable. Every value carries the file and line it came
/// from; values the file leaves out are null (see <see cref="EffectivePolicy"/> for the defaults).
/// </summary>
public sealed record PolicyDocument
{
    /// <summary>The file as it was named to the loader.</summary>
    public required string File { get; init; }

    /// <summary>metadata.name</summary>
    public required PolicyValue<string> Name { get; init; }

    /// <summary>metadata.description</summary>
    public PolicyValue<string>? Description { get; init; }

    public StubbingSettings Stubbing { get; init; } = new();
    public CacheThresholds CacheThresholds { get; init; } = new();
    public UploadSettings Upload { get; init; } = new();
    public IReadOnlyList<PathPattern> Excludes { get; init; } = [];
    public IReadOnlyList<MetadataRule> Metadata { get; init; } = [];
    public IReadOnlyList<ProcessRule> ProcessExcludes { get; init; } = [];
    public ThrottleSettings Throttle { get; init; } = new();
    public TransferSettings Transfer { get; init; } = new();
    public IReadOnlyList<RecallJob> RecallJobs { get; init; } = [];
}
