using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Policies.Evaluation;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// cacheThresholds (docs/policies.md): when the cache volume is used above stubAbove (or has less than
/// reserveFree free, never taken as less than twice <see cref="CacheReserve.Bytes"/>), Cached files are stubbed
/// least recently accessed first until usage is down to stubUntil and reserveFree is free again. Pinned, open,
/// empty and too-small files are never chosen; mirror mode (stubbing disabled) never stubs. A volume that stays
/// over its threshold with nothing left to stub is said once, until it is under again.
/// A pass keeps only the least recently accessed files that cover the bytes to free (its memory grows with
/// those, not with the drive), and looks again when stubbing them was not enough.
/// </summary>
/// <param name="volume">The cache volume, measured before the pass and after each stub.</param>
/// <param name="policy">The policy in force at the moment of the pass.</param>
/// <param name="visitCached">Visits the drive's Cached files, one at a time (<see cref="GeoDrive.Core.Ports.IFileIndex.VisitByState"/>).</param>
/// <param name="held">Whether a file may not be stubbed now (open, or its object may still get an earlier run's late write).</param>
/// <param name="stub">The drive's stubbing of one file, which checks again under the file's lock.</param>
/// <param name="record">The drive's event log.</param>
public sealed class CacheThresholds(
    ICacheVolume volume,
    Func<PolicyEvaluator> policy,
    Action<Action<FileEntry>> visitCached,
    Func<FileEntry, bool> held,
    Func<string, CancellationToken, Task<FileEntry>> stub,
    Action<DriveEventKind, string?, string, string?> record)
{
    private bool _unreachableReported;

    /// <summary>One pass: stubs what the thresholds ask for and returns how many files were stubbed.</summary>
    public async Task<int> StubAsync(CancellationToken cancellationToken)
    {
        var rules = policy();
        if (!rules.StubbingEnabled)
        {
            return 0;
        }
        var usage = volume.Measure();
        var stubAbove = rules.Policy.StubAbove.Value.ToBytes(usage.TotalBytes);
        var stubUntil = rules.Policy.StubUntil.Value.ToBytes(usage.TotalBytes);
        // Never less than twice the room the drive keeps for itself: applications' writes are refused below it
        // (CacheReserve), so stubbing starts before they are (docs/decisions/0013-full-cache-volume.md).
        var reserveFree = Math.Max(rules.Policy.ReserveFree.Value.ToBytes(usage.TotalBytes), 2 * CacheReserve.Bytes);
        if (usage.UsedBytes <= stubAbove && usage.AvailableBytes >= reserveFree)
        {
            _unreachableReported = false;
            return 0;
        }

        var started = usage;
        var stubbed = 0;
        var tried = new HashSet<string>(StringComparer.Ordinal);
        while (!Reached(usage))
        {
            var candidates = OldestCovering(Math.Max(usage.UsedBytes - stubUntil, reserveFree - usage.AvailableBytes), rules, tried);
            if (candidates.Length == 0)
            {
                break;
            }
            foreach (var path in candidates)
            {
                if (Reached(usage))
                {
                    break;
                }
                tried.Add(path);
                try
                {
                    if ((await stub(path, cancellationToken)).State == FileState.Stubbed)
                    {
                        stubbed++;
                    }
                }
                catch (GeoDriveException ex)
                {
                    record(DriveEventKind.Error, path, $"Not stubbed for the cache threshold: {ex.Message}", ex.ErrorId);
                }
                usage = volume.Measure();
            }
        }

        var reached = Reached(usage);
        if (stubbed > 0)
        {
            record(DriveEventKind.Stub, null,
                $"Cache volume was {started.UsedPercent:0.#}% used (stubAbove {rules.Policy.StubAbove.Value}): stubbed {stubbed} least recently used files, now {usage.UsedPercent:0.#}%.", null);
        }
        if (!reached && !_unreachableReported)
        {
            _unreachableReported = true;
            record(DriveEventKind.Error, null,
                $"The cache volume stays {usage.UsedPercent:0.#}% used, above stubUntil {rules.Policy.StubUntil.Value}: every remaining file is pinned, open, Dirty or below minimumSize.",
                ErrorIds.CacheThresholdUnreachable);
        }
        return stubbed;

        bool Reached(VolumeUsage now) => now.UsedBytes <= stubUntil && now.AvailableBytes >= reserveFree;
    }

    /// <summary>
    /// The least recently accessed files that may be stubbed (not tried yet in this pass) whose sizes add up to
    /// <paramref name="bytes"/>, oldest first: a visit that keeps at most those, dropping the newest kept whenever the
    /// others cover the bytes without it.
    /// </summary>
    private string[] OldestCovering(long bytes, PolicyEvaluator rules, HashSet<string> tried)
    {
        // The newest kept comes out first: priorities are negated access times.
        var kept = new PriorityQueue<(string Path, long Size), long>();
        long keptBytes = 0;
        visitCached(e =>
        {
            if (e.Size <= 0 || tried.Contains(e.Path) || !AccessWaitStubbing.MayStub(e, rules, held))
            {
                return;
            }
            kept.Enqueue((e.Path, e.Size), -e.LastAccessUtc.UtcTicks);
            keptBytes += e.Size;
            while (kept.TryPeek(out var newest, out _) && keptBytes - newest.Size >= bytes)
            {
                kept.Dequeue();
                keptBytes -= newest.Size;
            }
        });
        // Filled from the end: the queue gives the newest first.
        var oldestFirst = new string[kept.Count];
        for (var i = oldestFirst.Length - 1; kept.TryDequeue(out var file, out _); i--)
        {
            oldestFirst[i] = file.Path;
        }
        return oldestFirst;
    }
}
