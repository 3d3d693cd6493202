namespace GeoDrive.Core.Model;

/// <summary>
/// Room on the cache volume that applications' writes and recalls never take: the index, its log and the bucket
/// journal live on the same volume, and a full volume must never stop the drive recording the stubs that free it
/// (docs/decisions/0013-full-cache-volume.md).
/// </summary>
public static class CacheReserve
{
    public const long Bytes = 8L << 20;
}
