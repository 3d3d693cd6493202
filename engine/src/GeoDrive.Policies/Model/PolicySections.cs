using GeoDrive.Policies.Globs;

namespace GeoDrive.Policies.Model;

// The sections of one policy file (docs/architecture.md, "Policies"). A value left out of the file is null here, so that
// merging can tell "not said" from "said the default"; EffectivePolicy fills in the defaults.

/// <summary>A path pattern and where it was written.</summary>
public sealed record PathPattern(Glob Glob, SourceLocation Origin)
{
    public string Pattern => Glob.Pattern;

    public override string ToString() => $"'{Pattern}' ({Origin})";
}

/// <summary>spec.stubbing</summary>
public sealed record StubbingSettings
{
    public PolicyValue<bool>? Enabled { get; init; }
    public PolicyValue<TimeSpan>? AccessWait { get; init; }
    public PolicyValue<long>? MinimumSize { get; init; }
    public IReadOnlyList<StubbingRule> Rules { get; init; } = [];
}

/// <summary>spec.stubbing.rules[]: pin paths, or give them their own access wait.</summary>
public sealed record StubbingRule(
    IReadOnlyList<PathPattern> Paths,
    PolicyValue<bool>? Pin,
    PolicyValue<TimeSpan>? AccessWait,
    SourceLocation Origin)
{
    /// <summary>The first of this rule's patterns that applies to the path (or a folder it is in), or null.</summary>
    public PathPattern? MatchFor(string path, bool isDirectory = false) =>
        Paths.FirstOrDefault(p => p.Glob.AppliesTo(path, isDirectory));
}

/// <summary>spec.cacheThresholds: cache usage levels that start and stop threshold stubbing, and free space to keep.</summary>
public sealed record CacheThresholds
{
    public PolicyValue<CacheLevel>? StubAbove { get; init; }
    public PolicyValue<CacheLevel>? StubUntil { get; init; }
    public PolicyValue<CacheLevel>? ReserveFree { get; init; }
}

/// <summary>spec.upload</summary>
public sealed record UploadSettings
{
    public PolicyValue<UploadMode>? Mode { get; init; }
    public PolicyValue<TimeSpan>? Settle { get; init; }
    public PolicyValue<TimeSpan>? UpdateWait { get; init; }
    public PolicyValue<PeerChangeAction>? PeerChanges { get; init; }
}

/// <summary>
/// spec.metadata[]: tags put on the objects of matching files, as user metadata; with <see cref="ObjectTags"/> true,
/// also as S3 object tags (x-amz-tagging), which bucket lifecycle rules can match.
/// </summary>
public sealed record MetadataRule(
    IReadOnlyList<PathPattern> Paths,
    IReadOnlyDictionary<string, PolicyValue<string>> Tags,
    SourceLocation Origin,
    PolicyValue<bool>? ObjectTags = null)
{
    public PathPattern? MatchFor(string path) => Paths.FirstOrDefault(p => p.Glob.AppliesTo(path));
}

/// <summary>spec.processExcludes[]: how a process (by image name, a glob) is treated. Null = not said by this rule.</summary>
public sealed record ProcessRule(
    PolicyValue<Glob> Process,
    PolicyValue<SyncAction>? FolderSync,
    PolicyValue<SyncAction>? FileSync,
    PolicyValue<SyncAction>? FileNotFound,
    PolicyValue<RecallAction>? Recall,
    SourceLocation Origin);

/// <summary>spec.throttle. Rates are bytes per second; 0 means unlimited.</summary>
public sealed record ThrottleSettings
{
    public PolicyValue<long>? Upload { get; init; }
    public PolicyValue<long>? Download { get; init; }
    public IReadOnlyList<ThrottleWindow> Schedule { get; init; } = [];
}

/// <summary>spec.throttle.schedule[]: other limits on some days between two local times (From inclusive, To exclusive).</summary>
public sealed record ThrottleWindow(
    IReadOnlySet<DayOfWeek> Days,
    TimeSpan From,
    TimeSpan To,
    PolicyValue<long>? Upload,
    PolicyValue<long>? Download,
    SourceLocation Origin)
{
    /// <summary>Whether the window is in force at this local time.</summary>
    public bool Covers(DateTime localTime) =>
        Days.Contains(localTime.DayOfWeek) && localTime.TimeOfDay >= From && localTime.TimeOfDay < To;
}

/// <summary>spec.transfer</summary>
public sealed record TransferSettings
{
    public PolicyValue<int>? UploadThreads { get; init; }
    public PolicyValue<int>? RestoreThreads { get; init; }
    public MultipartSettings Multipart { get; init; } = new();
}

/// <summary>spec.transfer.multipart: files at or above Threshold move in parts of PartSize, several threads per file.</summary>
public sealed record MultipartSettings
{
    public PolicyValue<long>? Threshold { get; init; }
    public PolicyValue<long>? PartSize { get; init; }
    public PolicyValue<int>? UploadThreads { get; init; }
    public PolicyValue<int>? RestoreThreads { get; init; }
}

/// <summary>spec.recallJobs[]: recall matching stubs on a cron schedule (pre-warming), read in TimeZone (null: the service's local time).</summary>
public sealed record RecallJob(
    PolicyValue<string> Name,
    IReadOnlyList<PathPattern> Paths,
    PolicyValue<CronSchedule> Schedule,
    SourceLocation Origin,
    PolicyValue<string>? TimeZone = null);
