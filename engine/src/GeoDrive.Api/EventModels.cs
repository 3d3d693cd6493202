namespace GeoDrive.Api;

/// <summary>One entry of a drive's event log (Get-CloudDriveEvent). Never carries secrets.</summary>
public sealed class DriveEventInfo
{
    public required string Drive { get; init; }
    /// <summary>Ascending in the order the events happened.</summary>
    public long Id { get; init; }
    public DateTimeOffset Time { get; init; }
    /// <summary>The engine's DriveEventKind: Upload, Stub, Recall, Delete, Rename, Error, Policy, Service, Sync …</summary>
    public required string Kind { get; init; }
    public string? Path { get; init; }
    public string Message { get; init; } = "";
    public string? ErrorId { get; init; }
}

/// <summary>What Get-CloudDriveEvent asks for; every filter is optional.</summary>
public sealed class DriveEventQuery
{
    /// <summary>Only events at or after this time.</summary>
    public DateTimeOffset? After { get; init; }
    /// <summary>Only events before this time.</summary>
    public DateTimeOffset? Before { get; init; }
    /// <summary>Only events of these kinds (case-insensitive names of DriveEventKind).</summary>
    public string[] Kinds { get; init; } = [];
    /// <summary>Only events whose path matches one of these drive-relative patterns ('*', '?', '**').</summary>
    public string[] Paths { get; init; } = [];
    /// <summary>At most this many, the newest; 0 means all that are kept.</summary>
    public int Newest { get; init; }
}

public static partial class ApiRoutes
{
    public static string Events(string name) => $"{Drive(name)}/events";
}
