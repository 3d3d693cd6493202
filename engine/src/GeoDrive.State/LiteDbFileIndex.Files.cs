using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.State.Mapping;
using LiteDB;

namespace GeoDrive.State;

public sealed partial class LiteDbFileIndex
{
    // Listings and scans read in pages of this many entries, each page its own short read: a caller that writes
    // while enumerating never runs inside a LiteDB read transaction (they are per thread), and no transaction holds
    // many pages. LiteDB 5 keeps every page a transaction reads until it ends, and its page cache grows to hold them
    // and never shrinks: one query over 100,000 entries left 60 MB cached for good, pages of 250 stay within the
    // cache's first 13 MB (docs/decisions/0016-memory-over-many-files.md).
    private const int PageSize = 250;

    // A read of up to this many entries of one state goes through the state index in one query: it holds at most
    // as many pages (8 MB), and a walk of every document for a few Dirty or Cached files among a million stubs would
    // read them all at every tick.
    private const int StateIndexReadLimit = 1_000;

    private long _documentsWalked;

    public FileEntry? Get(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        ThrowIfDisposed();
        // A path the index cannot hold (every new file's name at its create) is answered without a LiteDB query.
        var doc = Known(path) ?? (_knownPaths.MayHold(path) ? Read(() => _files.FindById(path)) : null);
        return doc is null ? null : FileEntryDocument.FromDocument(doc);
    }

    public void PutDeferred(FileEntry entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        ArgumentException.ThrowIfNullOrEmpty(entry.Path, nameof(entry));
        ThrowIfDisposed();
        WriteDeferred(entry.Path, FileEntryDocument.ToDocument(entry));
    }

    public void Put(FileEntry entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        ArgumentException.ThrowIfNullOrEmpty(entry.Path, nameof(entry));
        var doc = FileEntryDocument.ToDocument(entry);
        WriteGrouped(() => UpsertCounted(doc), path: entry.Path, doc: doc);
    }

    public bool Delete(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        return WriteGrouped(() => DeleteCounted(path), path: path);
    }

    /// <summary>
    /// Moves <paramref name="oldPath"/> and everything under "oldPath/" to the same names under
    /// <paramref name="newPath"/>, in one transaction; existing entries at the new names are replaced,
    /// as a rename replaces its target. Returns how many entries moved.
    /// </summary>
    public int Rename(string oldPath, string newPath)
    {
        ArgumentException.ThrowIfNullOrEmpty(oldPath);
        ArgumentException.ThrowIfNullOrEmpty(newPath);
        if (string.Equals(oldPath, newPath, StringComparison.Ordinal))
        {
            return 0;
        }

        if (newPath.StartsWith(oldPath + "/", StringComparison.Ordinal))
        {
            throw new ArgumentException($"Cannot move '{oldPath}' into itself ('{newPath}').", nameof(newPath));
        }

        // A rename is one transaction of its own: deferred puts queued before it go first.
        FlushDeferred();
        try
        {
            return RenameLocked(oldPath, newPath);
        }
        finally
        {
            ForgetRecent();
        }
    }

    private int RenameLocked(string oldPath, string newPath)
    {
        return Write(() =>
        {
            if (!_db.BeginTrans())
            {
                throw new InvalidOperationException("A LiteDB transaction is already open on this thread; the index never leaves one open.");
            }

            try
            {
                var moving = new List<BsonDocument>();
                if (_files.FindById(oldPath) is { } self)
                {
                    moving.Add(self);
                }

                moving.AddRange(FindUnder(oldPath, after: null, limit: int.MaxValue));

                // All deletes before all inserts: a moved name may equal another moved entry's old name
                // (renaming "a/b" to "a" moves "a/b/b/x" onto "a/b/x", which itself moves to "a/x").
                foreach (var doc in moving)
                {
                    DeleteCounted(doc["_id"]);
                }

                foreach (var doc in moving)
                {
                    doc["_id"] = newPath + doc["_id"].AsString[oldPath.Length..];
                    UpsertCounted(doc);
                }

                _db.Commit();
                return moving.Count;
            }
            catch
            {
                _db.Rollback();
                _stateCounts.Invalidate();
                throw;
            }
        });
    }

    public IReadOnlyList<FileEntry> FindByState(FileState state, int limit = int.MaxValue)
    {
        ThrowIfDisposed();
        if (limit <= 0)
        {
            return [];
        }

        FlushDeferred();
        return InState(state, limit).Select(FileEntryDocument.FromDocument).ToList();
    }

    public void VisitByState(FileState state, Action<FileEntry> visit)
    {
        ArgumentNullException.ThrowIfNull(visit);
        ThrowIfDisposed();
        FlushDeferred();
        foreach (var doc in InState(state, int.MaxValue))
        {
            visit(FileEntryDocument.FromDocument(doc));
        }
    }

    /// <summary>
    /// Up to <paramref name="limit"/> documents in <paramref name="state"/>. Up to <see cref="StateIndexReadLimit"/>
    /// (by the limit or the counts) come from the state index in one read; more come from every document, a page per
    /// read, filtered here: a read of a state's entries through its index holds each of their pages until it ends.
    /// </summary>
    private IEnumerable<BsonDocument> InState(FileState state, int limit)
    {
        if (limit <= StateIndexReadLimit || Read(() => _stateCounts.Of(state)) <= StateIndexReadLimit)
        {
            return Read(() => _files.Query().Where(StateIs(state)).Limit(limit).ToList());
        }
        var name = state.ToString();
        return Documents("").Where(doc => doc[FileEntryDocument.State].AsString == name).Take(limit);
    }

    private static BsonExpression StateIs(FileState state) => BsonExpression.Create($"$.{FileEntryDocument.State} = @0", state.ToString());

    public IEnumerable<FileEntry> All() => Under("");

    /// <summary>Entries whose path starts with "folderPath/" (ordinal), in path order; "" = every entry.</summary>
    public IEnumerable<FileEntry> Under(string folderPath)
    {
        ArgumentNullException.ThrowIfNull(folderPath);
        ThrowIfDisposed();
        FlushDeferred();
        return Enumerate(folderPath.TrimEnd('/'));
    }

    public long Count()
    {
        ThrowIfDisposed();
        FlushDeferred();
        return Read(() => _files.LongCount());
    }

    public IReadOnlyDictionary<FileState, long> CountByState()
    {
        ThrowIfDisposed();
        FlushDeferred();
        // Kept as entries change (StateCounts); counted again only after a rolled-back transaction.
        return Read(() => _stateCounts.Stale ? null : _stateCounts.Snapshot())
               ?? Write(() =>
               {
                   RecountStates();
                   return _stateCounts.Snapshot();
               }, durable: false);
    }

    /// <summary>
    /// Counts every state again (at open, after a heal or a rollback); under the write lock. One pass over every
    /// document, a page per query, where a count per state through the state index held all of a state's pages at once.
    /// </summary>
    private void RecountStates()
    {
        var counts = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var page in Pages(after => FindUnderLocked("", after, PageSize)))
        {
            foreach (var doc in page)
            {
                var state = doc[FileEntryDocument.State].AsString;
                counts[state] = counts.GetValueOrDefault(state) + 1;
            }
        }
        _stateCounts.Recount(state => counts.GetValueOrDefault(state.ToString()));
    }

    /// <summary>Upserts an entry's document and counts its state change; inside a write.</summary>
    private bool UpsertCounted(BsonDocument doc)
    {
        var id = doc["_id"];
        var before = _stateCounts.Before(id.AsString, () => _knownPaths.MayHold(id.AsString) ? _files.FindById(id) : null);
        // Known before it can be read: a filter never misses an entry.
        _knownPaths.Adding(id.AsString);
        var inserted = _files.Upsert(doc);
        _stateCounts.Changed(id.AsString, before, doc);
        FillKnownPathsIfDue();
        return inserted;
    }

    /// <summary>For tests: the bytes LiteDB's page cache holds (it grows to hold every page one transaction reads, and never shrinks).</summary>
    internal long PageCacheBytes => Read(() =>
    {
        using var reader = _db.Execute("SELECT $.cache FROM $database");
        return reader.Read() ? reader.Current["cache"]["extendPages"].AsInt32 * 8_192L : 0;
    });

    /// <summary>For tests: how many documents listings and scans have read a page at a time.</summary>
    internal long DocumentsWalked => Interlocked.Read(ref _documentsWalked);

    /// <summary>For tests: the latest fill of the known paths has ended.</summary>
    internal Task KnownPathsFillEnded => _knownPaths.FillEnded;

    /// <summary>For tests: false when the index answers for <paramref name="path"/> without a LiteDB read (it holds no entry there).</summary>
    internal bool MayHold(string path) => _knownPaths.MayHold(path);

    /// <summary>Under the write lock (or while opening): fills a new filter of known paths in the background when one is due.</summary>
    private void FillKnownPathsIfDue()
    {
        if (!_knownPaths.FillDue)
        {
            return;
        }
        var entries = _stateCounts.Stale ? 0 : _stateCounts.Snapshot().Values.Sum();
        if (_knownPaths.StartFill(entries) is { } filling)
        {
            _ = Task.Run(() => FillKnownPaths(filling));
        }
    }

    /// <summary>Adds every entry's path to <paramref name="filling"/>, a page per read, then puts it in use (see <see cref="Lookup.KnownPaths"/>).</summary>
    private void FillKnownPaths(Lookup.PathFilter filling)
    {
        var filled = false;
        try
        {
            // Closed meanwhile: no read after that, and the fill is abandoned below.
            foreach (var page in Pages(after => _disposed ? [] : Read(() => FindUnderLocked("", after, PageSize))))
            {
                foreach (var doc in page)
                {
                    filling.Add(doc["_id"].AsString);
                }
            }
            filled = true;
        }
        catch (Exception ex) when (ex is LiteException or IOException or ObjectDisposedException or GeoDriveException or InvalidOperationException)
        {
            // The index failed or closed meanwhile: answers keep coming from LiteDB, and a later write fills again.
        }
        _access.EnterWriteLock();
        try
        {
            if (filled && !_disposed)
            {
                _knownPaths.Filled(filling);
            }
            else
            {
                _knownPaths.FillAbandoned(filling);
            }
        }
        finally
        {
            _access.ExitWriteLock();
        }
    }

    /// <summary>Deletes an entry and counts it out; inside a write.</summary>
    private bool DeleteCounted(BsonValue id)
    {
        var before = _stateCounts.Before(id.AsString, () => _files.FindById(id));
        var deleted = _files.Delete(id);
        // Not deleted: there was no entry (whatever was remembered), and there is none now.
        _stateCounts.Changed(id.AsString, deleted ? before : null, null);
        return deleted;
    }

    private IEnumerable<FileEntry> Enumerate(string folder) => Documents(folder).Select(FileEntryDocument.FromDocument);

    /// <summary>Documents under "folder/" ("": every one) in _id order, a page per read, no lock held between pages.</summary>
    private IEnumerable<BsonDocument> Documents(string folder)
    {
        foreach (var page in Pages(after => FindUnder(folder, after, PageSize)))
        {
            Interlocked.Add(ref _documentsWalked, page.Count);
            foreach (var doc in page)
            {
                yield return doc;
            }
        }
    }

    /// <summary>Pages of documents in _id order, each read by <paramref name="readAfter"/> (the last _id of the page before, null first) until one comes short.</summary>
    private static IEnumerable<List<BsonDocument>> Pages(Func<string?, List<BsonDocument>> readAfter)
    {
        string? after = null;
        while (true)
        {
            var page = readAfter(after);
            yield return page;
            if (page.Count < PageSize)
            {
                yield break;
            }
            after = page[^1]["_id"].AsString;
        }
    }

    /// <summary>
    /// Documents under "folder/" in _id order, after <paramref name="after"/>, as one index range scan.
    /// A range rather than LIKE, whose '_' and '%' are wildcards and common in file names. With the
    /// ordinal collation every name starting "a/" sorts in ["a/", "a0"), '0' being the character after '/'.
    /// </summary>
    private List<BsonDocument> FindUnder(string folder, string? after, int limit)
    {
        return Read(() => FindUnderLocked(folder, after, limit));
    }

    private List<BsonDocument> FindUnderLocked(string folder, string? after, int limit)
    {
        var low = after ?? (folder.Length == 0 ? "" : folder + "/");
        var prefix = folder.Length == 0 ? "" : folder + "/";
        var query = _files.Query();
        query = folder.Length == 0
            ? query.Where(BsonExpression.Create("$._id >= @0", low))
            : query.Where(BsonExpression.Create("$._id BETWEEN @0 AND @1", low, folder + "0"));

        return query
            .OrderBy("$._id")
            .Limit(after is null || limit == int.MaxValue ? limit : limit + 1)
            .ToEnumerable()
            .Where(doc =>
            {
                var id = doc["_id"].AsString;
                return id.StartsWith(prefix, StringComparison.Ordinal) && !string.Equals(id, after, StringComparison.Ordinal);
            })
            .Take(limit)
            .ToList();
    }
}
