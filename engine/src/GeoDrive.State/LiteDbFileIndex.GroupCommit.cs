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
/// the log with the next commit, run on the thread pool when no caller is there to run it.
/// A commit queued on the pool that has not started yet is taken over by the next caller that would
/// otherwise wait for it: callers blocked on a commit that only a pool thread would run starved the pool
/// (16 upload workers waiting, the API unanswered for 13 s while the pool grew to ~500 threads).
/// </summary>
public sealed partial class LiteDbFileIndex
{
    private readonly Lock _groupGate = new();
    private List<GroupedWrite> _waiting = [];
    private bool _committing;

    // The next commit is queued on the thread pool and nobody has started it: the first caller to come
    // runs it instead of waiting for a pool thread (CommitQueued then finds nothing to do).
    private bool _leadQueued;

    // Deferred puts not yet committed, newest per path; what Get answers for them meanwhile.
    private readonly Dictionary<string, (BsonDocument Doc, GroupedWrite Write)> _unflushed = new(StringComparer.Ordinal);

    // A deferred write's commit failed with nobody waiting: the next write or barrier reports it.
    private Exception? _deferredFailure;

    private T WriteGrouped<T>(Func<T> write, bool durable = true)
    {
        ThrowIfDeferredFailed();
        var mine = new GroupedWrite(() => write()) { Durable = durable };
        bool lead;
        lock (_groupGate)
        {
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
        ThrowIfDeferredFailed();
        var mine = new GroupedWrite(() => _files.Upsert(doc)) { Deferred = true, Durable = false, Path = path };
        bool lead;
        lock (_groupGate)
        {
            _unflushed[path] = (doc, mine);
            _waiting.Add(mine);
            lead = !_committing;
            _committing = true;
            _leadQueued |= lead;
        }
        if (lead)
        {
            QueueCommit();
        }
    }

    private void QueueCommit() =>
        ThreadPool.UnsafeQueueUserWorkItem(static index => index.CommitQueued(), this, preferLocal: false);

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

    /// <summary>The deferred document for <paramref name="path"/>, when one is waiting for its commit.</summary>
    private BsonDocument? Unflushed(string path)
    {
        lock (_groupGate)
        {
            return _unflushed.TryGetValue(path, out var pending) ? pending.Doc : null;
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
            pending = _unflushed.Count > 0;
        }
        if (pending)
        {
            // Committed, so LiteDB's readers see them; no fsync is needed for that.
            WriteGrouped(static () => 0, durable: false);
        }
        ThrowIfDeferredFailed();
    }

    private void ThrowIfDeferredFailed()
    {
        if (Volatile.Read(ref _deferredFailure) is { } failure)
        {
            throw new InvalidOperationException($"The drive's index could not write a change: {failure.Message}", failure);
        }
    }

    /// <summary>Commits everything waiting, then hands the lead to the first write that arrived meanwhile.</summary>
    private void CommitWaiting()
    {
        List<GroupedWrite> group;
        lock (_groupGate)
        {
            group = _waiting;
            _waiting = [];
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
                        write.Result = write.Action();
                    }
                    _db.Commit();
                }
                catch
                {
                    _db.Rollback();
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
        GroupedWrite? next;
        lock (_groupGate)
        {
            foreach (var write in group)
            {
                if (!write.Deferred)
                {
                    continue;
                }
                if (write.Error is { } failed)
                {
                    _deferredFailure ??= failed;
                }
                // Committed (or failed for good): Get reads the index again, unless a newer deferral came.
                if (_unflushed.TryGetValue(write.Path!, out var pending) && ReferenceEquals(pending.Write, write))
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

    private sealed class GroupedWrite(Func<object?> action)
    {
        public Func<object?> Action { get; } = action;

        public object? Result { get; set; }

        public Exception? Error { get; set; }

        /// <summary>Set when this write is committed, or when its caller is to run the next commit.</summary>
        public ManualResetEventSlim Signal { get; } = new(false);

        public volatile bool Lead;

        /// <summary>Nobody waits for this write (<see cref="WriteDeferred"/>).</summary>
        public bool Deferred { get; init; }

        /// <summary>Its caller needs it on disk when the call returns (every write but deferred ones and read barriers).</summary>
        public bool Durable { get; init; } = true;

        /// <summary>The entry a deferred write puts.</summary>
        public string? Path { get; init; }

        public void Run()
        {
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
