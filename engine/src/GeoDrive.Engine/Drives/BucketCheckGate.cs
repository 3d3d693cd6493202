using GeoDrive.Core.Errors;
using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The bucket checks made on a user's path (folder sync before a listing, lookup of a missing name,
/// fileSync at open) wait at most <see cref="DriveEngineOptions.BucketCheckDeadline"/>; after that the
/// operation goes on with the cache as it is. Once a check went unanswered the bucket is "silent":
/// later checks are skipped without waiting, and a background probe (at most one at a time, one per
/// deadline of the engine's clock, started by the checks that come) lets them through again once it answers.
/// Recalls, uploads and deletes never pass here: they have the store's own timeouts and retries.
/// </summary>
internal sealed class BucketCheckGate(TimeSpan deadline, IClock clock, Func<CancellationToken, Task> probe, Action<string?, string, string?> record)
{
    private readonly Lock _gate = new();
    private bool _silent;
    private bool _probing;
    private DateTimeOffset _lastProbeUtc = DateTimeOffset.MinValue;

    public TimeSpan Deadline => deadline;

    /// <summary>True while the bucket is known not to answer (checks are skipped).</summary>
    public bool Silent
    {
        get
        {
            lock (_gate)
            {
                return _silent;
            }
        }
    }

    /// <summary>
    /// Runs one check within the deadline: (true, its result) when the bucket answered; (false, default)
    /// when it was skipped because the bucket is silent, or did not answer in time (the bucket is silent from then on).
    /// Answers that are failures (access denied, …) reach the caller as exceptions, as before.
    /// </summary>
    public Task<(bool Answered, T? Result)> TryAsync<T>(string? path, Func<CancellationToken, Task<T>> check, CancellationToken cancellationToken) =>
        TryAsync(path, (t, _) => check(t), cancellationToken);

    /// <summary>
    /// As above, for a check of several requests (a folder sync: a listing, then HEADs): the deadline is
    /// on the bucket's first answer, which the check reports by calling the action it is given; from
    /// then on a bucket that answers is waited for (each request still has the store's idle timeout).
    /// </summary>
    public async Task<(bool Answered, T? Result)> TryAsync<T>(string? path, Func<CancellationToken, Action, Task<T>> check, CancellationToken cancellationToken)
    {
        if (Silent)
        {
            ProbeIfDue();
            return (false, default);
        }
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timer.CancelAfter(deadline);
        var firstAnswer = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        try
        {
            var checking = check(timer.Token, () =>
            {
                if (firstAnswer.TrySetResult())
                {
                    timer.CancelAfter(Timeout.InfiniteTimeSpan);
                }
            });
            // The deadline holds even for a store call that does not heed its token.
            _ = await Task.WhenAny(checking, firstAnswer.Task).WaitAsync(deadline, cancellationToken);
            return (true, await checking);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested && ex is OperationCanceledException or TimeoutException)
        {
            WentSilent(path, $"The bucket did not answer within {deadline.TotalSeconds:0.#} s");
            return (false, default);
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.EndpointUnreachable)
        {
            WentSilent(path, ex.Message.TrimEnd('.'));
            return (false, default);
        }
    }

    private void WentSilent(string? path, string why)
    {
        lock (_gate)
        {
            if (_silent)
            {
                return;
            }
            _silent = true;
            _lastProbeUtc = clock.UtcNow;
        }
        record(path, $"{why}; listings, lookups and opens go on with the cache as it is, without asking the bucket, until it answers again.", ErrorIds.EndpointUnreachable);
    }

    private void ProbeIfDue()
    {
        lock (_gate)
        {
            var now = clock.UtcNow;
            if (_probing || now - _lastProbeUtc < deadline)
            {
                return;
            }
            _probing = true;
            _lastProbeUtc = now;
        }
        _ = Task.Run(ProbeAsync);
    }

    private async Task ProbeAsync()
    {
        var answered = false;
        try
        {
            using var timer = new CancellationTokenSource(deadline);
            await probe(timer.Token).WaitAsync(deadline);
            answered = true;
        }
        catch (GeoDriveException ex) when (ex.ErrorId != ErrorIds.EndpointUnreachable)
        {
            // Any answer from the server (even a refusal) means it is there again.
            answered = true;
        }
        catch (Exception)
        {
            // Still silent: the next check after another deadline probes again.
        }
        lock (_gate)
        {
            _probing = false;
            if (!answered || !_silent)
            {
                return;
            }
            _silent = false;
        }
        record(null, "The bucket answers again; listings, lookups and opens ask it again.", null);
    }
}
