using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.State.Mapping;
using LiteDB;

namespace GeoDrive.State;

/// <summary>The bucket journal (changes owed to the bucket), in the drive's own index file: it moves, crashes and restarts with the index.</summary>
public sealed partial class LiteDbFileIndex : IBucketJournal
{
    private const string JournalCollection = "bucketJournal";

    private ILiteCollection<BsonDocument> Journal => _db.GetCollection(JournalCollection, BsonAutoId.Int64);

    public void Add(IReadOnlyList<BucketChange> changes)
    {
        ArgumentNullException.ThrowIfNull(changes);
        if (changes.Count == 0)
        {
            return;
        }
        // Grouped with the file entries' writes, so it is committed in order with them and durable on return.
        WriteGrouped(() =>
        {
            var journal = Journal;
            foreach (var change in changes)
            {
                var doc = BucketChangeDocument.ToDocument(change);
                doc.Remove("_id");
                change.Id = journal.Insert(doc).AsInt64;
            }
            return 0;
        });
    }

    public void Update(BucketChange change)
    {
        ArgumentNullException.ThrowIfNull(change);
        var doc = BucketChangeDocument.ToDocument(change);
        WriteGrouped(() => Journal.Update(doc));
    }

    public void Remove(long id) => WriteGrouped(() => Journal.Delete(id));

    public IReadOnlyList<BucketChange> ReadOwed()
    {
        ThrowIfDisposed();
        FlushDeferred();
        return Read(() => Journal.FindAll().Select(BucketChangeDocument.FromDocument).OrderBy(c => c.Id).ToList());
    }

    /// <summary>Created with the index, before it is shared (see <see cref="CreateEventsCollection"/>), its Int64 ids starting at 1.</summary>
    private void CreateJournalCollection()
    {
        if (_db.CollectionExists(JournalCollection))
        {
            return;
        }
        _db.BeginTrans();
        try
        {
            Journal.Insert(new BsonDocument { ["_id"] = 0L });
            Journal.Delete(0L);
            _db.Commit();
        }
        catch
        {
            _db.Rollback();
            throw;
        }
    }
}
