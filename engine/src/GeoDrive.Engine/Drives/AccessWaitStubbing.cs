using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Policies.Evaluation;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// Stubbing by access wait: a Cached file not accessed for its access wait is stubbed. The scan reads every
/// Cached entry, so it runs only when one can be due: at the earliest due time the last scan saw, or sooner
/// when a file becomes Cached, is closed, is unpinned or the policy changes (<see cref="NeededBy"/>). Before,
/// it ran at every tick, which on a drive of a few thousand files was most of the service's CPU while it
/// uploaded (issue 4's profile). At least every 10 minutes all the same, a safety net rather than a schedule.
/// </summary>
/// <param name="policy">The policy in force at the moment of the scan.</param>
/// <param name="visitCached">Visits the drive's Cached files one at a time, so a scan never holds them all (on a
/// drive of 100,000 files the list the scan once read weighed tens of MB, once a minute).</param>
/// <param name="held">Whether a file may not be stubbed now: it has a handle open (its close sets its due time), or a request an
/// earlier run sent may still write its object (the drive asks for a scan when that grace ends).</param>
/// <param name="stub">The drive's stubbing of one file, which checks again under the file's lock.</param>
/// <param name="record">The drive's event log.</param>
/// <param name="batchSize">How many files one scan stubs at most (the next tick goes on).</param>
public sealed class AccessWaitStubbing(
    Func<PolicyEvaluator> policy,
    Action<Action<FileEntry>> visitCached,
    Func<FileEntry, bool> held,
    Func<string, CancellationToken, Task<FileEntry>> stub,
    Action<DriveEventKind, string?, string, string?> record,
    IClock clock,
    int batchSize)
{
    // The scan's safety net, should a trigger be missed: every Cached entry is read, and on a drive of many files
    // that is seconds of CPU, so not every minute (docs/decisions/0016-memory-over-many-files.md).
    private static readonly TimeSpan MaxInterval = TimeSpan.FromMinutes(10);
    private readonly Lock _gate = new();
    private DateTimeOffset _notBefore = DateTimeOffset.MinValue;

    /// <summary>A Cached file may be due for stubbing by its access wait at <paramref name="at"/>: scan by then.</summary>
    public void NeededBy(DateTimeOffset at)
    {
        lock (_gate)
        {
            if (at < _notBefore)
            {
                _notBefore = at;
            }
        }
    }

    /// <summary>As <see cref="NeededBy"/> for a file that is Cached now (by its last access and access wait).</summary>
    public void NeededFor(FileEntry cached)
    {
        if (cached.State == FileState.Cached)
        {
            NeededBy(cached.LastAccessUtc + policy().AccessWaitFor(cached.Path));
        }
    }

    /// <summary>Whether the policy lets a Cached file be stubbed at all: not pinned (by cmdlet or rule), not held (open), not below minimumSize.</summary>
    internal static bool MayStub(FileEntry entry, PolicyEvaluator rules, Func<FileEntry, bool> held) =>
        !entry.Pinned && !held(entry) && entry.Size >= rules.MinimumSize && !rules.IsPinned(entry.Path);

    /// <summary>One pass of the tick: stubs what is due, if a scan is due; returns how many files were stubbed.</summary>
    public async Task<int> StubDueAsync(CancellationToken cancellationToken)
    {
        var rules = policy();
        if (!rules.StubbingEnabled)
        {
            return 0;
        }
        var now = clock.UtcNow;
        lock (_gate)
        {
            if (now < _notBefore)
            {
                return 0;
            }
            // Claimed: what becomes Cached during the scan lowers it again.
            _notBefore = DateTimeOffset.MaxValue;
        }
        var next = DateTimeOffset.MaxValue;
        var due = new List<string>();
        visitCached(e =>
        {
            // Pinned and too small stay so until a pin or the policy changes; an open file's close
            // sets its last access, and with it its own due time.
            if (!MayStub(e, rules, held))
            {
                return;
            }
            var dueAt = e.LastAccessUtc + rules.AccessWaitFor(e.Path);
            if (dueAt > now)
            {
                next = dueAt < next ? dueAt : next;
            }
            else if (due.Count < batchSize)
            {
                due.Add(e.Path);
            }
            else
            {
                next = now; // more than one batch is due: the next tick goes on
            }
        });
        var stubbed = 0;
        foreach (var path in due)
        {
            try
            {
                if ((await stub(path, cancellationToken)).State == FileState.Stubbed)
                {
                    stubbed++;
                }
            }
            catch (GeoDriveException ex)
            {
                // Tried again at the next tick, as before the scan was scheduled.
                next = now;
                record(DriveEventKind.Error, path, $"Not stubbed: {ex.Message}", ex.ErrorId);
            }
        }
        NeededBy(next < now + MaxInterval ? next : now + MaxInterval);
        return stubbed;
    }
}
