using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// Where a drive keeps its scheduled recall jobs and their history, so both survive a restart. The
/// LiteDB index implements it (the same file as the drive's index); writes are durable on return.
/// </summary>
public interface IRecallJobStore
{
    IReadOnlyList<RecallJobRecord> ReadRecallJobs();

    /// <summary>Inserts or replaces the job (by name, case-insensitively).</summary>
    void PutRecallJob(RecallJobRecord job);

    bool DeleteRecallJob(string name);
}

/// <summary>A job store in memory, for an index that keeps none (tests of other parts); nothing survives a restart.</summary>
public sealed class InMemoryRecallJobStore : IRecallJobStore
{
    private readonly Dictionary<string, RecallJobRecord> _jobs = new(StringComparer.OrdinalIgnoreCase);
    private readonly Lock _gate = new();

    public IReadOnlyList<RecallJobRecord> ReadRecallJobs()
    {
        lock (_gate)
        {
            return [.. _jobs.Values];
        }
    }

    public void PutRecallJob(RecallJobRecord job)
    {
        lock (_gate)
        {
            _jobs[job.Name] = job;
        }
    }

    public bool DeleteRecallJob(string name)
    {
        lock (_gate)
        {
            return _jobs.Remove(name);
        }
    }
}
