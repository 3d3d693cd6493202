namespace GeoDrive.Policies.Model;

/// <summary>
/// What a drive does for every key no policy file sets. docs/policies.md lists the same values; change
/// both together. They are chosen so that a drive with an empty policy is safe and unsurprising.
/// </summary>
public static class PolicyDefaults
{
    public const bool StubbingEnabled = true;
    public static readonly TimeSpan AccessWait = TimeSpan.FromDays(30);
    public const long MinimumSize = 0;

    public static readonly CacheLevel StubAbove = CacheLevel.OfPercent(90);
    public static readonly CacheLevel StubUntil = CacheLevel.OfPercent(80);
    public static readonly CacheLevel ReserveFree = CacheLevel.OfBytes(0);

    public const UploadMode Mode = UploadMode.Async;
    public static readonly TimeSpan Settle = TimeSpan.FromSeconds(30);
    public static readonly TimeSpan UpdateWait = TimeSpan.FromMinutes(5);
    public const PeerChangeAction PeerChanges = PeerChangeAction.Stub;

    /// <summary>0: unlimited.</summary>
    public const long UploadLimit = 0;
    /// <summary>0: unlimited.</summary>
    public const long DownloadLimit = 0;

    public const int UploadThreads = 8;
    public const int RestoreThreads = 8;
    public const long MultipartThreshold = 64L << 20;
    public const long PartSize = 16L << 20;
    public const int MultipartUploadThreads = 4;
    public const int MultipartRestoreThreads = 4;

    public const SyncAction FolderSync = SyncAction.Sync;
    public const SyncAction FileSync = SyncAction.Sync;
    public const SyncAction FileNotFound = SyncAction.Sync;
    public const RecallAction Recall = RecallAction.Hydrate;
}
