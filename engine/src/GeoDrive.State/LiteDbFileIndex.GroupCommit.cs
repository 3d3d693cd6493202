namespace GeoDrive.State;

/// <summary>
/// Group commit. Every write must be in the log file before its call returns, and on a busy drive
/// (uploads finishing, files closing through the mount) each commit's log flush was the cost that
/// serialized them all. Writes that arrive while another commit is under way wait together and go in
/// the next commit, one transaction and one flush for all; each caller still returns only once its
/// own write is flushed. One of the waiting callers runs that next commit, so no thread serves others forever.
/// </summary>
public sealed partial class LiteDbFileIndex
{
    private readonly Lock _groupGate = new();
    private List<GroupedWrite> _waiting = [];
    private bool _committing;

    private T WriteGrouped<T>(Func<T> write)
    {
        var mine = new GroupedWrite(() => write());
        bool lead;
        lock (_groupGate)
        {
            _waiting.Add(mine);
            lead = !_committing;
            _committing = true;
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
            });
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
            next = _waiting.Count > 0 ? _waiting[0] : null;
            _committing = next is not null;
        }
        foreach (var write in group)
        {
            write.Signal.Set();
        }
        if (next is not null)
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
