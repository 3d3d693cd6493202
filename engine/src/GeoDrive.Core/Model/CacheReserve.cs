namespace GeoDrive.Core.Model;

/// <summary>
/// Room on the cache volume that applications' writes and recalls never take: the index, its log and the bucket
/// journal live on the same volume, and a full volume must never stop the drive recording the stubs that free it
/// (docs/decisions/0013-full-cache-volume.md).
/// </summary>
public static class CacheReserve
{
    public const long Bytes = 8L << 20;

    private const int ENOSPC = 28;
    private const int DiskFullWindows = unchecked((int)0x80070070);

    /// <summary>True when a write failed because its volume is full (ENOSPC; ERROR_DISK_FULL on Windows).</summary>
    public static bool IsVolumeFull(IOException ex) =>
        ex.HResult is ENOSPC or DiskFullWindows || ex.Message.Contains("No space left", StringComparison.Ordinal);
}
