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
