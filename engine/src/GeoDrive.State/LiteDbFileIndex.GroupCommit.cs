using LiteDB;

namespace GeoDrive.State;

/// <summary>
/// Group commit. Every write must be in the log file before its call returns, and on a busy drive
/// (uploads finishing, files closing through the mount) each commit's log flush was the cost that
/// serialized them all. Writes that arrive while another commit is under way wait together and go in
/// the next commit, one transaction and one flush for all; each caller still returns only once its
/// own write is flushed. One of the waiting callers runs that next commit, so no thread serves others forever.
/// A deferred write (<see cref="PutDeferred"/>) joins the same queue, in the same order, but its caller
/// does not wait: it is visible to <see cref="Get"/> at once (from <see cref="_unflushed"/>) and goes to
/// the log with the next commit, run by a timer <see cref="DeferredGather"/> later when no caller is there to run it. Events are appended
/// the same way (<see cref="WriteEventDeferred"/>).
/// A commit queued on the pool that has not started yet is taken over by the next caller that would
/// otherwise wait for it: callers blocked on a commit that only a pool thread would run starved the pool
/// (16 upload workers waiting, the API unanswered for 13 s while the pool grew to ~500 threads).
/// A put of a path supersedes that path's deferred put still waiting in the queue: only the newest
/// document is written (an upload's Uploading and Cached often meet in one commit).
/// Committed documents of recent puts stay in <see cref="_recent"/>, so <see cref="Get"/> of a file
/// being uploaded or recalled needs no LiteDB read (those reads were a tenth of the service's CPU
/// while it uploaded small files).
/// </summary>
public sealed partial class LiteDbFileIndex
{
    private readonly Lock _groupGate = new();
    private List<GroupedWrite> _waiting = [];
    private bool _committing;

    // The next commit is queued on the thread pool and nobody has started it: the first caller to come
    // runs it instead of waiting for a pool thread (CommitQueued then finds nothing to do).
    private bool _leadQueued;

    // The id of the newest event appended (queued or committed); events queued and not yet committed.
    private long _lastEventId;
    private int _eventsQueued;

    // Deferred puts not yet committed, newest per path; what Get answers for them meanwhile.
    private readonly Dictionary<string, (BsonDocument Doc, GroupedWrite Write)> _unflushed = new(StringComparer.Ordinal);


    // Committed documents of recent puts, newest per path (all under _groupGate). A queued put or delete
    // of a path takes the path out until its commit is known; a rename empties it and moves the epoch,
    // so a commit that raced the rename adds nothing. Emptied when it reaches RecentLimit entries.
    private const int RecentLimit = 8_192;
    private readonly Dictionary<string, BsonDocument> _recent = new(StringComparer.Ordinal);
    private long _recentEpoch;

    /// <summary>
    /// Queues <paramref name="write"/> and returns once it is committed (and flushed when
    /// <paramref name="durable"/>). A write of one file entry names its <paramref name="path"/>, with the
    /// <paramref name="doc"/> it puts (null: it deletes).
    /// </summary>
    private T WriteGrouped<T>(Func<T> write, bool durable = true, string? path = null, BsonDocument? doc = null)
    {
        var mine = new GroupedWrite(() => write()) { Durable = durable, Path = path, Doc = doc };
        bool lead;
        lock (_groupGate)
        {
            if (path is not null)
            {
                Supersede(path, byPut: doc is not null);
            }
            _waiting.Add(mine);
            lead = !_committing || _leadQueued;
            _committing = true;
            _leadQueued = false;
        }
        if (!lead)
        {
            mine.Signal.Wait();
            if (mine.Lead)
            {
                CommitWaiting();
            }
        }
        else
        {
            CommitWaiting();
        }
        mine.Signal.Dispose();
        if (mine.Error is { } error)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(error);
        }
        return (T)mine.Result!;
    }

    /// <summary>Queues an upsert of <paramref name="doc"/> without waiting for it; see the class summary.</summary>
    private void WriteDeferred(string path, BsonDocument doc)
    {
        var mine = new GroupedWrite(() => UpsertCounted(doc)) { Deferred = true, Durable = false, Path = path, Doc = doc };
        bool lead;
        lock (_groupGate)
        {
            Supersede(path, byPut: true);
            _unflushed[path] = (doc, mine);
            lead = QueueDeferredLocked(mine);
        }
        if (lead)
        {
            QueueCommit();
        }
    }

    /// <summary>
    /// Queues an event's <paramref name="insert"/> of <paramref name="doc"/> as a deferred write (nobody waits for
    /// it) and returns the id it gives the event: the next one, taken under the gate, so ids ascend in queue order.
    /// Should its commit fail, the event is lost (the index, opened again, reports the failure to the writes that wait).
    /// </summary>
    private long WriteEventDeferred(BsonDocument doc, Action insert)
    {
        bool lead;
        long id;
        lock (_groupGate)
        {
            id = ++_lastEventId;
            doc["_id"] = id;
            _eventsQueued++;
            lead = QueueDeferredLocked(new GroupedWrite(() =>
            {
                insert();
                return null;
            }) { Deferred = true, Durable = false });
        }
        if (lead)
        {
            QueueCommit();
        }
        return id;
    }

    /// <summary>
    /// Under <see cref="_groupGate"/>: queues a deferred write; true when no commit is under way, so the caller
    /// queues one on the pool (<see cref="QueueCommit"/>) once out of the gate.
    /// </summary>
    private bool QueueDeferredLocked(GroupedWrite write)
    {
        _waiting.Add(write);
        var lead = !_committing;
        _committing = true;
        _leadQueued |= lead;
        return lead;
    }

    /// <summary>
    /// How long deferred writes wait for company before the pool commits them (nobody waits for them, and a caller that
    /// would wait takes the commit over at once). A recall's Recalling then usually meets its Cached in the queue and is
    /// never written, and one commit carries many files' pages: the index was a third of the service's CPU while it
    /// recalled small files, each recall writing three times (docs/decisions.md).
    /// </summary>
    public static readonly TimeSpan DeferredGather = TimeSpan.FromMilliseconds(20);

    private Timer? _gatherTimer;

    // Called by the one caller that took the lead for the pool (under _committing), so never twice at once.
    private void QueueCommit() =>
        (_gatherTimer ??= new Timer(static index => ((LiteDbFileIndex)index!).CommitQueued(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan))
            .Change(DeferredGather, Timeout.InfiniteTimeSpan);

    /// <summary>The pool's turn at a queued commit, unless a caller has already taken it over.</summary>
    private void CommitQueued()
    {
        lock (_groupGate)
        {
            if (!_leadQueued)
            {
                return;
            }
            _leadQueued = false;
        }
        CommitWaiting();
    }

    /// <summary>
    /// Called under <see cref="_groupGate"/> as a write of <paramref name="path"/> is queued: when it is a
    /// put, a deferred put of the path still waiting (not taken by a commit) will not be written; either
    /// way the path's committed document is no longer known here until this write's commit. (A delete
    /// supersedes nothing: it answers whether the entry existed.)
    /// </summary>
    private void Supersede(string path, bool byPut)
    {
        if (_unflushed.TryGetValue(path, out var pending))
        {
            if (pending.Write.Failed)
            {
                // A deferred put whose commit failed, kept to be written again: this write of the path replaces it.
                _unflushed.Remove(path);
            }
            else if (byPut && !pending.Write.Taken)
            {
                pending.Write.Superseded = true;
            }
        }
        _recent.Remove(path);
    }

    /// <summary>
    /// For <see cref="HealLocked"/>: the documents a failed commit may have lost, newest per path — recent puts (their
    /// commit may not have reached the log) and deferred puts whose commit failed. <see cref="_recent"/> is emptied.
    /// </summary>
    private List<BsonDocument> RedoAfterHeal()
    {
        lock (_groupGate)
        {
            var redo = new Dictionary<string, BsonDocument>(_recent, StringComparer.Ordinal);
            foreach (var (path, pending) in _unflushed)
            {
                if (pending.Write.Failed)
                {
                    redo[path] = pending.Doc;
                }
            }
            _recentEpoch++;
            _recent.Clear();
            return [.. redo.Values];
        }
    }

    /// <summary>The failed deferred puts among <paramref name="redone"/> are in the index now: Get reads them there.</summary>
    private void RedoneAfterHeal(List<BsonDocument> redone)
    {
        lock (_groupGate)
        {
            foreach (var doc in redone)
            {
                var path = doc["_id"].AsString;
                if (_unflushed.TryGetValue(path, out var pending) && pending.Write.Failed && ReferenceEquals(pending.Doc, doc))
                {
                    _unflushed.Remove(path);
                }
            }
        }
    }

    /// <summary>The document for <paramref name="path"/> without a LiteDB read: a deferred put waiting for its commit, or a recent put's.</summary>
    private BsonDocument? Known(string path)
    {
        lock (_groupGate)
        {
            return _unflushed.TryGetValue(path, out var pending) ? pending.Doc
                : _recent.GetValueOrDefault(path);
        }
    }

    /// <summary>A rename moved entries in LiteDB: documents known by their old paths are forgotten, and so are those of commits that raced it.</summary>
    private void ForgetRecent()
    {
        lock (_groupGate)
        {
            _recentEpoch++;
            _recent.Clear();
        }
    }

    /// <summary>
    /// Returns once every write queued before the call is committed (not necessarily on disk): listings and counts
    /// call it when deferred writes are pending, so they never miss an entry that Get already shows.
    /// </summary>
    private void FlushDeferred()
    {
        bool pending;
        lock (_groupGate)
        {
            pending = _unflushed.Count > 0 || _eventsQueued > 0;
        }
        if (pending)
        {
            // Committed, so LiteDB's readers see them; no fsync is needed for that.
            WriteGrouped(static () => 0, durable: false);
        }
    }

    /// <summary>Commits everything waiting, then hands the lead to the first write that arrived meanwhile.</summary>
    private void CommitWaiting()
    {
        List<GroupedWrite> group;
        long epoch;
        lock (_groupGate)
        {
            group = _waiting;
            _waiting = [];
            epoch = _recentEpoch;
            foreach (var write in group)
            {
                write.Taken = true;
            }
        }
        try
        {
            Write(() =>
            {
                if (group.Count == 1)
                {
                    group[0].Run();
                    return 0;
                }
                if (!_db.BeginTrans())
                {
                    throw new InvalidOperationException("A LiteDB transaction is already open on this thread; the index never leaves one open.");
                }
                try
                {
                    foreach (var write in group)
                    {
                        if (!write.Superseded)
                        {
                            write.Result = write.Action();
                        }
                    }
                    _db.Commit();
                }
                catch
                {
                    _db.Rollback();
                    _stateCounts.Invalidate();
                    // One by one, so each caller gets its own answer.
                    foreach (var write in group)
                    {
                        write.Run();
                    }
                }
                return 0;
            }, durable: group.Exists(static w => w.Durable));
        }
        catch (Exception ex)
        {
            // The flush (or the index itself) failed: no write of this group is known to be durable.
            foreach (var write in group)
            {
                write.Error ??= ex;
            }
        }
        foreach (var write in group)
        {
            if (write.Error is { } failed)
            {
                // LiteDB closes itself on a failed write: the next call opens it again (HealLocked).
                BrokenBy(failed);
            }
        }
        GroupedWrite? next;
        lock (_groupGate)
        {
            var known = epoch == _recentEpoch;
            foreach (var write in group)
            {
                if (write.Path is not null && !write.Superseded)
                {
                    Remember(write, known);
                }
                if (!write.Deferred)
                {
                    continue;
                }
                if (write.Path is null)
                {
                    // An event: committed, or lost with its group.
                    _eventsQueued--;
                    continue;
                }
                var newest = _unflushed.TryGetValue(write.Path!, out var pending) && ReferenceEquals(pending.Write, write);
                if (write.Error is not null)
                {
                    // Nobody waits to hear it: the index is opened again at the next call (Write marked it broken).
                    if (newest)
                    {
                        // Kept: Get still answers it, and the index writes it again once it is opened again (HealLocked).
                        write.Failed = true;
                        continue;
                    }
                }
                // Committed: Get reads the index again, unless a newer deferral came.
                if (newest)
                {
                    _unflushed.Remove(write.Path!);
                }
            }
            // The lead goes to a caller that is waiting anyway (the commit takes every queued write, in
            // order, whoever runs it); to the pool only when all that waits is deferred.
            next = _waiting.Find(static w => !w.Deferred) ?? (_waiting.Count > 0 ? _waiting[0] : null);
            _committing = next is not null;
            _leadQueued = next is { Deferred: true };
        }
        foreach (var write in group)
        {
            if (write.Deferred)
            {
                write.Signal.Dispose();
            }
            else
            {
                write.Signal.Set();
            }
        }
        if (next is null)
        {
            return;
        }
        if (next.Deferred)
        {
            // Nobody waits on a deferred write to run the next commit: the pool does, or the next caller.
            QueueCommit();
        }
        else
        {
            next.Lead = true;
            next.Signal.Set();
        }
    }

    /// <summary>
    /// After a commit (under <see cref="_groupGate"/>): a put's document becomes what <see cref="Get"/>
    /// answers, unless it failed, a rename raced it (<paramref name="known"/> false) or a newer write of the
    /// path is queued (that one's commit tells).
    /// </summary>
    private void Remember(GroupedWrite write, bool known)
    {
        var path = write.Path!;
        if (!known || write.Error is not null || write.Doc is null || _waiting.Exists(w => w.Path == path))
        {
            _recent.Remove(path);
            return;
        }
        if (_recent.Count >= RecentLimit)
        {
            _recent.Clear();
        }
        _recent[path] = write.Doc;
    }

    private sealed class GroupedWrite(Func<object?> action)
    {
        public Func<object?> Action { get; } = action;

        public object? Result { get; set; }

        public Exception? Error { get; set; }

        /// <summary>
        /// Set when this write is committed, or when its caller is to run the next commit. It blocks without
        /// spinning first: a commit takes an fsync, far longer than a spin, and on two cores the spinning
        /// (sched_yield) of every waiter took CPU from the commit they wait for.
        /// </summary>
        public ManualResetEventSlim Signal { get; } = new(false, spinCount: 0);

        public volatile bool Lead;

        /// <summary>Nobody waits for this write (<see cref="WriteDeferred"/>).</summary>
        public bool Deferred { get; init; }

        /// <summary>Its caller needs it on disk when the call returns (every write but deferred ones and read barriers).</summary>
        public bool Durable { get; init; } = true;

        /// <summary>The entry a write puts or deletes (null: not one file entry's write).</summary>
        public string? Path { get; init; }

        /// <summary>The document a put writes; null for a delete.</summary>
        public BsonDocument? Doc { get; init; }

        /// <summary>Taken by a commit (under <see cref="_groupGate"/>): too late to be superseded.</summary>
        public bool Taken;

        /// <summary>A newer put of the same path was queued before this one was taken: it is not written.</summary>
        public bool Superseded;

        /// <summary>A deferred put whose commit failed (under <see cref="_groupGate"/>): written again when the index is opened again.</summary>
        public bool Failed;

        public void Run()
        {
            if (Superseded)
            {
                return;
            }
            try
            {
                Result = Action();
                Error = null;
            }
            catch (Exception ex)
            {
                Error = ex;
            }
        }
    }
}
