namespace GeoDrive.Engine.Drives;

/// <summary>What one drive is, as the engine needs it. Validated once by the Service.</summary>
public sealed class DriveEngineOptions
{
    public required string Name { get; init; }

    /// <summary>The local folder with the files' data and stubs; the engine keeps its own files in ".geodrive" inside it.</summary>
    public required string CachePath { get; init; }

    /// <summary>Prepended to every object key ("" or ending in '/').</summary>
    public string Prefix { get; init; } = "";

    /// <summary>
    /// Names compare case-insensitively: keys are written in lower case (<see cref="Core.Paths.DrivePath.FoldCase"/>) with
    /// the name as written in the object's metadata (geodrive-name), and keys of one name in two cases are shown once.
    /// Fixed when the drive is made (docs/decisions/0019-case-insensitive-drives.md).
    /// </summary>
    public bool CaseInsensitive { get; init; }

    /// <summary>Uploads running at once; transfer.uploadThreads will set it (issue 4).</summary>
    public int UploadConcurrency { get; init; } = 4;

    /// <summary>Settled files waiting for an upload worker; beyond it the tick queues them later.</summary>
    public int UploadQueueCapacity { get; init; } = 1024;

    /// <summary>
    /// True: <see cref="DriveEngine.TickAsync"/> returns once the upload pipeline is idle (tests and
    /// tools step the engine that way). The Service sets false: its tick only queues, the workers run on.
    /// </summary>
    public bool TickWaitsForUploads { get; init; } = true;

    /// <summary>Longest wait between retries of a failed upload.</summary>
    public TimeSpan MaxRetryDelay { get; init; } = TimeSpan.FromMinutes(5);

    /// <summary>How many due files one tick looks at, so one tick never holds a huge list.</summary>
    public int TickBatchSize { get; init; } = 512;

    /// <summary>The volume cache thresholds are measured on; by default the one that holds <see cref="CachePath"/>.</summary>
    public Files.ICacheVolume? CacheVolume { get; init; }

    /// <summary>The zone schedules are read in: throttle windows, and recall jobs that name none; null = the machine's local zone.</summary>
    public TimeZoneInfo? TimeZone { get; init; }

    /// <summary>
    /// The longest a listing, a lookup of a missing name or an open waits for the bucket's answer
    /// (folder sync, fileSync) before it goes on with the cache as it is. Real time, not the engine's clock:
    /// it bounds how long an application is held by a network that does not answer.
    /// </summary>
    public TimeSpan BucketCheckDeadline { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How long after a start a request the previous run sent before it died may still land on the server (a PUT it had
    /// sent whole, a copy): deletes that run owed are made at once and, once this has passed, looked at again
    /// (docs/architecture.md, "The bucket journal"). Zero: not looked at again.
    /// </summary>
    public TimeSpan LateWriteGrace { get; init; } = DefaultLateWriteGrace;

    /// <summary>The <see cref="LateWriteGrace"/> a drive gets when nobody sets one.</summary>
    public static readonly TimeSpan DefaultLateWriteGrace = TimeSpan.FromMinutes(2);

    /// <summary>The instruments the drive reports on; null: <see cref="Metrics.EngineMeter.Shared"/> (the service's).</summary>
    public Metrics.EngineMeter? Meter { get; init; }

    /// <summary>The engine's own folder name inside the cache.</summary>
    public const string InternalFolder = ".geodrive";

    /// <summary>Whether a drive path is the engine's own folder or in it (never shown, synced or uploaded).</summary>
    public static bool IsInternal(string path) =>
        path == InternalFolder || path.StartsWith(InternalFolder + "/", StringComparison.Ordinal);

    /// <summary>
    /// Where the engine keeps its own files: "&lt;cache&gt;/.geodrive" unless the host puts them elsewhere
    /// (on Windows the cache folder is the ProjFS root, whose every entry applications see).
    /// </summary>
    public string InternalPath
    {
        get => _internalPath ?? Path.Combine(CachePath, InternalFolder);
        init => _internalPath = value;
    }

    private readonly string? _internalPath;
}
