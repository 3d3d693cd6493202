namespace GeoDrive.Core.Model;

/// <summary>What happened on a drive, for Get-CloudDriveEvent and logs. Never carries secrets.</summary>
public sealed class DriveEvent
{
    public long Id { get; set; }
    public DateTimeOffset TimeUtc { get; set; }
    public DriveEventKind Kind { get; set; }
    public string? Path { get; set; }
    public string Message { get; set; } = "";
    public string? ErrorId { get; set; }

    /// <summary>
    /// A single file's success that a busy drive records thousands of times an hour: uploaded, stubbed, recalled, deleted,
    /// renamed, or brought from the bucket. Kept in the drive's events (Get-CloudDriveEvent) and written to the service's
    /// log at Debug only (docs/decisions/0035-routine-events-off-the-log.md). A pass's or a job's summary (no path), a
    /// refusal or failure (an error id), a policy, a start, a pin, a restore and a conflict are not routine.
    /// </summary>
    public bool IsRoutine =>
        ErrorId is null && Path is not null && Kind is DriveEventKind.Upload or DriveEventKind.Stub or DriveEventKind.Recall
            or DriveEventKind.Delete or DriveEventKind.Rename or DriveEventKind.Sync;
}

public enum DriveEventKind
{
    Upload,
    Stub,
    Recall,
    Delete,
    Rename,
    Error,
    Policy,
    Service,
    /// <summary>The bucket brought something new: stubs and folders from a folder sync or lookup, a newer version found at open.</summary>
    Sync,
    /// <summary>Set-CloudFile -Pin / -Unpin.</summary>
    Pin,
    /// <summary>A file changed here and in the bucket: both were kept (the local bytes under a conflict name).</summary>
    Conflict,
    /// <summary>Restore-CloudFile made an older version of a file current again.</summary>
    Restore,
}
