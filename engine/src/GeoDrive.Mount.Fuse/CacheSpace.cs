using GeoDrive.Core.Model;

namespace GeoDrive.Mount.Fuse;

/// <summary>
/// Whether an application's write through the mount may take space on the cache volume: refused (ENOSPC) once
/// less than <see cref="CacheReserve.Bytes"/> would be left, so the drive can always record the stubs that free
/// space. The volume is measured at most every 100 ms while there is room; near the reserve, at every write.
/// </summary>
internal sealed class CacheSpace(string cachePath, long reserveBytes = CacheReserve.Bytes)
{
    private static readonly long MeasureEveryMs = 100;
    private readonly Lock _gate = new();
    // Nothing known yet: the first write measures.
    private long _available;
    private long _measuredAt;

    public bool Allows(long bytes)
    {
        lock (_gate)
        {
            var now = Environment.TickCount64;
            if (now - _measuredAt >= MeasureEveryMs || _available - bytes < reserveBytes)
            {
                _available = new DriveInfo(cachePath).AvailableFreeSpace;
                _measuredAt = now;
            }
            if (_available - bytes < reserveBytes)
            {
                return false;
            }
            _available -= bytes;
            return true;
        }
    }
}
