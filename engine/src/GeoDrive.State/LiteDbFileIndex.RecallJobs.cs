using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.State.Mapping;

namespace GeoDrive.State;

/// <summary>Scheduled recall jobs and their history, in the drive's own index file (so they move and restart with the drive).</summary>
public sealed partial class LiteDbFileIndex : IRecallJobStore
{
    private const string RecallJobsCollection = "recallJobs";

    public IReadOnlyList<RecallJobRecord> ReadRecallJobs()
    {
        ThrowIfDisposed();
        return Read(() => _db.GetCollection(RecallJobsCollection).FindAll().Select(RecallJobDocument.FromDocument).ToList());
    }

    public void PutRecallJob(RecallJobRecord job)
    {
        ArgumentNullException.ThrowIfNull(job);
        var doc = RecallJobDocument.ToDocument(job);
        Write(() => _db.GetCollection(RecallJobsCollection).Upsert(doc));
    }

    public bool DeleteRecallJob(string name) =>
        Write(() => _db.GetCollection(RecallJobsCollection).Delete(RecallJobDocument.Id(name)));
}
