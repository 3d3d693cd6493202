using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    // Set while the cache is over its threshold with nothing left to stub, so that is said once, not every tick.
    private bool _thresholdUnreachableReported;

    /// <summary>
    /// cacheThresholds: when the cache volume is used above stubAbove (or has less than reserveFree free, never
    /// taken as less than twice <see cref="CacheReserve.Bytes"/>), Cached files are stubbed least recently accessed first until usage is down to stubUntil
    /// and reserveFree is free again. Pinned, Dirty, open and too-small files are never chosen; mirror
    /// mode (stubbing disabled) never stubs.
    /// </summary>
    private async Task<int> StubForCacheThresholdsAsync(CancellationToken cancellationToken)
    {
        var policy = _policy;
        if (!policy.StubbingEnabled)
        {
            return 0;
        }
        var volume = Options.CacheVolume ?? new FolderVolume(Options.CachePath);
        var usage = volume.Measure();
        var stubAbove = policy.Policy.StubAbove.Value.ToBytes(usage.TotalBytes);
        var stubUntil = policy.Policy.StubUntil.Value.ToBytes(usage.TotalBytes);
        // Never less than twice the room the drive keeps for itself: applications' writes are refused below it
        // (CacheReserve), so stubbing starts before they are (docs/decisions/0013-full-cache-volume.md).
        var reserveFree = Math.Max(policy.Policy.ReserveFree.Value.ToBytes(usage.TotalBytes), 2 * CacheReserve.Bytes);
        if (usage.UsedBytes <= stubAbove && usage.AvailableBytes >= reserveFree)
        {
            _thresholdUnreachableReported = false;
            return 0;
        }

        var started = usage;
        var candidates = _index.FindByState(FileState.Cached)
            .Where(e => !e.Pinned
                        && !_open.ContainsKey(e.Path)
                        && e.Size > 0
                        && e.Size >= policy.MinimumSize
                        && !policy.IsPinned(e.Path))
            .OrderBy(e => e.LastAccessUtc)
            .Select(e => e.Path)
            .ToList();
        var stubbed = 0;
        foreach (var path in candidates)
        {
            if (usage.UsedBytes <= stubUntil && usage.AvailableBytes >= reserveFree)
            {
                break;
            }
            try
            {
                if ((await StubAsync(path, cancellationToken)).State == FileState.Stubbed)
                {
                    stubbed++;
                }
            }
            catch (GeoDriveException ex)
            {
                Record(DriveEventKind.Error, path, $"Not stubbed for the cache threshold: {ex.Message}", ex.ErrorId);
            }
            usage = volume.Measure();
        }

        var reached = usage.UsedBytes <= stubUntil && usage.AvailableBytes >= reserveFree;
        if (stubbed > 0)
        {
            Record(DriveEventKind.Stub, null,
                $"Cache volume was {started.UsedPercent:0.#}% used (stubAbove {policy.Policy.StubAbove.Value}): stubbed {stubbed} least recently used files, now {usage.UsedPercent:0.#}%.");
        }
        if (!reached && !_thresholdUnreachableReported)
        {
            _thresholdUnreachableReported = true;
            Record(DriveEventKind.Error, null,
                $"The cache volume stays {usage.UsedPercent:0.#}% used, above stubUntil {policy.Policy.StubUntil.Value}: every remaining file is pinned, open, Dirty or below minimumSize.",
                ErrorIds.CacheThresholdUnreachable);
        }
        return stubbed;
    }
}
