namespace GeoDrive.Engine.Files;

/// <summary>
/// At most <c>limit()</c> holders at once, in the order they asked, where the limit may change while it is in use
/// (a policy saved with other transfer threads): a raised limit lets waiters in at once (<see cref="Admit"/>), a lowered
/// one lets nobody new in until enough holders left. A <see cref="SemaphoreSlim"/> keeps the count it was made with.
/// </summary>
internal sealed class ConcurrencyLimit(Func<int> limit)
{
    private readonly Lock _gate = new();
    private readonly Queue<TaskCompletionSource> _waiting = new();
    private int _held;

    /// <summary>Holders now.</summary>
    public int Held
    {
        get
        {
            lock (_gate)
            {
                return _held;
            }
        }
    }

    private int Limit => Math.Max(1, limit());

    /// <summary>Waits for a place; dispose the answer to give it back.</summary>
    public async Task<IDisposable> EnterAsync(CancellationToken cancellationToken)
    {
        TaskCompletionSource turn;
        lock (_gate)
        {
            if (_waiting.Count == 0 && _held < Limit)
            {
                _held++;
                return new Place(this);
            }
            turn = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiting.Enqueue(turn);
        }
        using (cancellationToken.Register(() => turn.TrySetCanceled(cancellationToken)))
        {
            await turn.Task;
        }
        return new Place(this);
    }

    /// <summary>Lets waiters in up to the limit of the moment (called when it may have been raised).</summary>
    public void Admit()
    {
        lock (_gate)
        {
            while (_held < Limit && _waiting.TryDequeue(out var next))
            {
                // A waiter that gave up (cancelled) is passed over; its place goes to the next.
                if (next.TrySetResult())
                {
                    _held++;
                }
            }
        }
    }

    private void Leave()
    {
        lock (_gate)
        {
            _held--;
        }
        Admit();
    }

    private sealed class Place(ConcurrencyLimit owner) : IDisposable
    {
        private int _left;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _left, 1) == 0)
            {
                owner.Leave();
            }
        }
    }
}
