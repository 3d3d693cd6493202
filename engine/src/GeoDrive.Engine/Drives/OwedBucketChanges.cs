using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The changes a drive owes its bucket, over the durable <see cref="IBucketJournal"/>: a change is
/// journaled before the local change it follows is acknowledged, is due until it is done, is tried
/// again with backoff when it fails, and everything still journaled at start (from a run that crashed
/// or stopped) is due at once. A key with an owed delete is a tombstone: never brought back from the
/// bucket as a stub. See docs/architecture.md, "The bucket journal".
/// </summary>
internal sealed class OwedBucketChanges
{
    private readonly IBucketJournal _journal;
    private readonly IClock _clock;
    private readonly TimeSpan _maxRetryDelay;
    private readonly Lock _gate = new();
    private readonly Dictionary<long, BucketChange> _owed = [];
    // Keys with an owed delete -> the change's id.
    private readonly ConcurrentDictionary<string, long> _deletes = new(StringComparer.Ordinal);
    // Source keys of owed copies -> how many copies read them (their bytes must stay until then).
    private readonly KeyCounts _copySources = new();
    // Destination keys of owed copies: an object there may be this drive's copy in flight, never a file to sync down.
    private readonly KeyCounts _copyDestinations = new();
    private readonly ConcurrentDictionary<string, byte> _liveUploads = new(StringComparer.Ordinal);
    // Changes whose last try failed only because the endpoint could not be reached: due again once it answers.
    private readonly HashSet<long> _waitingForEndpoint = [];
    // Metadata updates that have read their file's properties: a later change owes an update of its own.
    private readonly HashSet<long> _begun = [];
    // Deletes that a request an earlier run sent may still follow on the server (see MadeOnce), and of those the ones made once.
    private readonly HashSet<long> _lateWritesPossible = [];
    private readonly HashSet<long> _madeOnce = [];
    // Changes journaled by an earlier run.
    private readonly HashSet<long> _inherited = [];
    private readonly DateTimeOffset _lateWritesLandedUtc;
    // Keys an earlier run's copies were to write (a copy names nothing it may replace): looked at once the grace has passed,
    // with its uploads' (TakeLateWriteKeys); after that, the keys not looked at yet (the endpoint did not answer).
    private List<string>? _lateCopyKeys = [];
    // Keys a request an earlier run sent may still write (its uploads, copies and folder markers in flight): a delete owed for
    // one within the grace is made as one that earlier run owed (MadeOnce).
    private readonly HashSet<string> _writtenLateMaybe = new(StringComparer.Ordinal);
    private readonly Func<string, string?> _knownVersionOf;

    /// <param name="lateWriteGrace">How long after this start a request an earlier run sent may still land (<see cref="DriveEngineOptions.LateWriteGrace"/>).</param>
    /// <param name="knownVersionOf">The version a file that left a key here knew there (<see cref="RenamedKeys.LeftVersion"/>), journaled with the key's delete.</param>
    public OwedBucketChanges(IBucketJournal journal, IClock clock, TimeSpan maxRetryDelay, TimeSpan lateWriteGrace = default, Func<string, string?>? knownVersionOf = null)
    {
        _journal = journal;
        _knownVersionOf = knownVersionOf ?? (static _ => null);
        _clock = clock;
        _maxRetryDelay = maxRetryDelay;
        _lateWritesLandedUtc = clock.UtcNow + lateWriteGrace;
        foreach (var change in journal.ReadOwed())
        {
            // Left by an earlier run: whatever it was waiting for (an upload in flight) ended with that run.
            change.NextAttemptUtc = null;
            _inherited.Add(change.Id);
            if (change.Kind == BucketChangeKind.DeleteObject)
            {
                _lateWritesPossible.Add(change.Id);
            }
            if (change.Kind == BucketChangeKind.CopyObject)
            {
                _lateCopyKeys!.Add(change.Key);
            }
            if (change.Kind is BucketChangeKind.CopyObject or BucketChangeKind.PutFolderMarker)
            {
                _writtenLateMaybe.Add(change.Key);
            }
            if (change.Kind == BucketChangeKind.CopyObject && change.Attempts == 0)
            {
                // The run may have died with the copy's request out and the server acting on it: counted as tried,
                // so a copy whose file moved on meanwhile owes its key's delete (see OwedChangeSettler.SettleCopyAsync).
                change.Attempts = 1;
            }
            _owed[change.Id] = change;
            Track(change);
        }
    }

    private void Track(BucketChange change)
    {
        if (change.Kind == BucketChangeKind.DeleteObject)
        {
            _deletes[change.Key] = change.Id;
        }
        else if (change.Kind == BucketChangeKind.CopyObject && change.SourceKey is { } source)
        {
            _copySources.Add(source);
            _copyDestinations.Add(change.Key);
        }
    }

    private void Untrack(BucketChange change)
    {
        if (change.Kind == BucketChangeKind.DeleteObject)
        {
            _deletes.TryRemove(new KeyValuePair<string, long>(change.Key, change.Id));
        }
        else if (change.Kind == BucketChangeKind.CopyObject && change.SourceKey is { } source)
        {
            _copySources.Remove(source);
            _copyDestinations.Remove(change.Key);
        }
    }

    /// <summary>Journals server-side copies (one durable write): <paramref name="copies"/> are (old key, new key).</summary>
    public void OweCopies(IEnumerable<(string From, string To)> copies)
    {
        var now = _clock.UtcNow;
        Journal([.. copies.Select(c => new BucketChange { Kind = BucketChangeKind.CopyObject, Key = c.To, SourceKey = c.From, CreatedUtc = now })]);
    }

    /// <summary>True while an owed copy still reads <paramref name="key"/>: its bytes must stay.</summary>
    public bool IsCopySource(string key) => _copySources.Contains(key);

    /// <summary>
    /// True while a copy to <paramref name="key"/> is owed: recovery need not owe another, and an object under the key
    /// may be that copy landing before the engine recorded it (its file renamed on meanwhile): a tombstone, as a delete is.
    /// </summary>
    public bool IsCopyOwedTo(string key) => _copyDestinations.Contains(key);

    public bool HasCopyOwedUnder(string prefixKey) => _copyDestinations.AnyUnder(prefixKey);

    /// <summary>
    /// How many changes are owed (for status and tests), counting each key an earlier run's copy may still write until it
    /// was looked at (<see cref="TakeLateWriteKeys"/>): nothing owed means the bucket is as the drive says.
    /// </summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _owed.Count + (_lateCopyKeys?.Count ?? 0);
            }
        }
    }

    /// <summary>
    /// Journals deletes of <paramref name="keys"/> (one durable write), each with the version the file that left it knew
    /// there, skipping keys whose delete is owed already.
    /// </summary>
    /// <param name="afterEarlierRun">Owed for a change an earlier run made or began: a request it sent may still land under the keys (<see cref="MadeOnce"/>).</param>
    public void OweDeletes(IEnumerable<string> keys, bool afterEarlierRun = false)
    {
        var now = _clock.UtcNow;
        var changes = keys.Distinct(StringComparer.Ordinal).Where(k => !_deletes.ContainsKey(k))
            .Select(k => new BucketChange { Kind = BucketChangeKind.DeleteObject, Key = k, KnownETag = _knownVersionOf(k), CreatedUtc = now })
            .ToList();
        Journal(changes);
        lock (_gate)
        {
            var withinGrace = now < _lateWritesLandedUtc;
            _lateWritesPossible.UnionWith(changes.Where(c => afterEarlierRun || (withinGrace && _writtenLateMaybe.Contains(c.Key))).Select(c => c.Id));
        }
    }

    /// <summary>
    /// Recovery found <paramref name="key"/>'s file Dirty or Uploading: the earlier run may have had its PUT out, and the server
    /// may store it late. A delete of the key owed within the late-write grace (the file deleted right after the restart) is
    /// then looked at again once the grace has passed, as one that run owed (<see cref="MadeOnce"/>).
    /// </summary>
    public void MayBeWrittenLate(string key)
    {
        lock (_gate)
        {
            _writtenLateMaybe.Add(key);
        }
    }

    /// <summary>When the requests an earlier run sent have had the late-write grace to land (this start plus the grace).</summary>
    public DateTimeOffset LateWritesLandedUtc => _lateWritesLandedUtc;

    /// <summary>
    /// Whether a request an earlier run sent may still write <paramref name="key"/>: within the grace, a key of
    /// <see cref="MayBeWrittenLate"/> or of that run's copies and folder markers. A file whose object is such a key is not
    /// stubbed yet: a late write landing after the stub would stand for the file, whose bytes would then be nowhere.
    /// </summary>
    public bool MayStillBeWrittenLate(string key)
    {
        lock (_gate)
        {
            return _writtenLateMaybe.Count > 0 && _clock.UtcNow < _lateWritesLandedUtc && _writtenLateMaybe.Contains(key);
        }
    }

    /// <summary>Whether <see cref="MayStillBeWrittenLate"/> can be true of any key (a scan of many files asks this first).</summary>
    public bool AnyMayStillBeWrittenLate
    {
        get
        {
            lock (_gate)
            {
                return _writtenLateMaybe.Count > 0 && _clock.UtcNow < _lateWritesLandedUtc;
            }
        }
    }

    /// <summary>
    /// Once the late-write grace has passed since start, and only once: the keys an earlier run's copies were to write, and
    /// those of the files it may have been uploading (<see cref="MayBeWrittenLate"/>), where that run's request may have been
    /// stored after this run's own writes: a copy names nothing it may replace, and a PUT to a server that takes no
    /// conditions neither (<see cref="OwedChangeSettler"/> looks at each). Empty before then, and after. Asked at every
    /// tick, it also lets go of <see cref="MayBeWrittenLate"/>'s keys then.
    /// </summary>
    public IReadOnlyList<string> TakeLateWriteKeys()
    {
        lock (_gate)
        {
            if (_clock.UtcNow < _lateWritesLandedUtc)
            {
                return [];
            }
            var keys = _lateCopyKeys is { } copies
                ? [.. copies.Union(_writtenLateMaybe.Where(k => !k.EndsWith('/')), StringComparer.Ordinal)]
                : new List<string>();
            // Past the grace these keys say nothing any more (a drive that started with many files Dirty kept them all).
            _writtenLateMaybe.Clear();
            _lateCopyKeys = null;
            return keys;
        }
    }

    /// <summary>Keys of <see cref="TakeLateWriteKeys"/> not looked at (the endpoint did not answer): taken again at the next tick.</summary>
    public void LookAtLateWritesAgain(IEnumerable<string> keys)
    {
        lock (_gate)
        {
            (_lateCopyKeys ??= []).AddRange(keys);
        }
    }

    /// <summary>Whether an earlier run journaled <paramref name="change"/>.</summary>
    public bool IsInherited(BucketChange change)
    {
        lock (_gate)
        {
            return _inherited.Contains(change.Id);
        }
    }

    /// <summary>
    /// A delete has just been made. One that a request an earlier run sent may still follow (journaled by that run, or owed
    /// for a copy it began) stays owed until the drive's late-write grace has passed since start, and is then due once
    /// more, to look at the key again (<see cref="IsMadeOnce"/>): a killed run's PUT that the server had whole acts on it
    /// when the server gets to it, after the restarted run's delete as easily as before (docs/architecture.md, "The
    /// bucket journal"). True when it stays owed; false when it is done (the caller reports it done).
    /// </summary>
    public bool MadeOnce(BucketChange change)
    {
        lock (_gate)
        {
            if (!_lateWritesPossible.Contains(change.Id) || _madeOnce.Contains(change.Id) || _clock.UtcNow >= _lateWritesLandedUtc
                || !_owed.TryGetValue(change.Id, out var owed))
            {
                return false;
            }
            _madeOnce.Add(change.Id);
            owed.NextAttemptUtc = _lateWritesLandedUtc;
            _waitingForEndpoint.Remove(change.Id);
            return true;
        }
    }

    /// <summary>Whether <paramref name="change"/> is a delete made once and due again to look at its key (<see cref="MadeOnce"/>).</summary>
    public bool IsMadeOnce(BucketChange change)
    {
        lock (_gate)
        {
            return _madeOnce.Contains(change.Id);
        }
    }

    /// <summary>Journals folder markers ("name/" keys) to put (one durable write).</summary>
    public void OweFolderMarkers(IEnumerable<string> keys)
    {
        var now = _clock.UtcNow;
        Journal([.. keys.Distinct(StringComparer.Ordinal).Select(k => new BucketChange { Kind = BucketChangeKind.PutFolderMarker, Key = k, CreatedUtc = now })]);
    }

    /// <summary>Journals a metadata update of <paramref name="key"/> (its file's properties changed), unless one is owed and not yet begun.</summary>
    public void OweMetadataUpdate(string key)
    {
        lock (_gate)
        {
            if (_owed.Values.Any(c => c.Kind == BucketChangeKind.UpdateMetadata && c.Key == key && !_begun.Contains(c.Id)))
            {
                return;
            }
        }
        Journal([new BucketChange { Kind = BucketChangeKind.UpdateMetadata, Key = key, CreatedUtc = _clock.UtcNow }]);
    }

    /// <summary>Whether <paramref name="key"/>'s object is owed this site's properties (a change here not yet in the bucket).</summary>
    public bool IsMetadataUpdateOwed(string key)
    {
        lock (_gate)
        {
            return _owed.Values.Any(c => c.Kind == BucketChangeKind.UpdateMetadata && c.Key == key);
        }
    }

    /// <summary>
    /// A metadata update has read the file's properties (its path lock held): a change after this owes another update,
    /// which <see cref="OweMetadataUpdate"/> would otherwise fold into this one.
    /// </summary>
    public void Begun(BucketChange change)
    {
        lock (_gate)
        {
            _begun.Add(change.Id);
        }
    }

    /// <summary>One durable write for <paramref name="changes"/>, then they are owed in memory too.</summary>
    private void Journal(List<BucketChange> changes)
    {
        if (changes.Count == 0)
        {
            return;
        }
        _journal.Add(changes);
        lock (_gate)
        {
            foreach (var change in changes)
            {
                _owed[change.Id] = change;
                Track(change);
            }
        }
    }

    /// <summary>
    /// Journals a multipart upload about to start under <paramref name="key"/>; it becomes due once the upload
    /// ended (or at the next start, after a crash), and is done when no upload of the key started since is open.
    /// </summary>
    public BucketChange OweMultipartSweep(string key)
    {
        var change = new BucketChange
        {
            Kind = BucketChangeKind.AbortMultipartUpload,
            Key = key,
            CreatedUtc = _clock.UtcNow,
            NextAttemptUtc = DateTimeOffset.MaxValue,
        };
        _journal.Add([change]);
        lock (_gate)
        {
            _owed[change.Id] = change;
        }
        return change;
    }

    /// <summary>Upload ids this run is sending parts to: a sweep of their key leaves them alone.</summary>
    public void UploadLive(string uploadId, bool live)
    {
        if (live)
        {
            _liveUploads[uploadId] = 0;
        }
        else
        {
            _liveUploads.TryRemove(uploadId, out _);
        }
    }

    public bool IsUploadLive(string uploadId) => _liveUploads.ContainsKey(uploadId);

    /// <summary>True while a multipart upload to <paramref name="key"/> is being started or sent (its sweep is not due yet).</summary>
    public bool IsMultipartInFlight(string key)
    {
        lock (_gate)
        {
            return _owed.Values.Any(c => c.Kind == BucketChangeKind.AbortMultipartUpload && c.Key == key && c.NextAttemptUtc == DateTimeOffset.MaxValue);
        }
    }

    /// <summary>The sweep owed for a multipart upload that ended is due now.</summary>
    public void MakeDue(BucketChange change)
    {
        lock (_gate)
        {
            if (_owed.TryGetValue(change.Id, out var owed))
            {
                owed.NextAttemptUtc = null;
            }
        }
    }

    public bool IsDeleteOwed(string key) => _deletes.ContainsKey(key);

    public bool HasDeleteOwedUnder(string prefixKey) =>
        !_deletes.IsEmpty && _deletes.Keys.Any(k => k.StartsWith(prefixKey, StringComparison.Ordinal));

    /// <summary>The changes due now, oldest first (copies: report back with <see cref="Done"/> or <see cref="Failed"/>).</summary>
    public IReadOnlyList<BucketChange> Due(int limit)
    {
        var now = _clock.UtcNow;
        lock (_gate)
        {
            var due = _owed.Values.Where(c => c.NextAttemptUtc is null || c.NextAttemptUtc <= now).OrderBy(c => c.Id).Take(limit).Select(c => c.Clone()).ToList();
            if (due.Count == 0 && _waitingForEndpoint.Count > 0 && now - _lastEndpointTryUtc >= EndpointTryInterval)
            {
                // Nothing else asks the endpoint (no upload waits): one change that waits for it tries now, and
                // if it goes through, the rest follow (EndpointAnswered).
                _lastEndpointTryUtc = now;
                due.AddRange(_waitingForEndpoint.Select(id => _owed.GetValueOrDefault(id)).OfType<BucketChange>().OrderBy(c => c.Id).Take(1).Select(c => c.Clone()));
            }
            return due;
        }
    }

    /// <summary>How often a change waiting for an unreachable endpoint tries it when nothing else does.</summary>
    public static readonly TimeSpan EndpointTryInterval = TimeSpan.FromSeconds(10);

    private DateTimeOffset _lastEndpointTryUtc = DateTimeOffset.MinValue;

    /// <summary>The change is done, or no longer owed (the key is in use again).</summary>
    public void Done(BucketChange change)
    {
        _journal.Remove(change.Id);
        bool removed;
        lock (_gate)
        {
            removed = _owed.Remove(change.Id);
            _begun.Remove(change.Id);
            _lateWritesPossible.Remove(change.Id);
            _madeOnce.Remove(change.Id);
            _inherited.Remove(change.Id);
        }
        if (removed)
        {
            Untrack(change);
        }
    }

    /// <summary>
    /// The change failed: still owed, tried again after a backoff that doubles up to the drive's longest retry delay;
    /// or, when it failed only because the endpoint could not be reached, as soon as the endpoint answers again
    /// (<see cref="EndpointAnswered"/>), whichever comes first.
    /// </summary>
    public void Failed(BucketChange change, string error, bool endpointUnreachable = false)
    {
        change.Attempts++;
        change.LastError = error;
        var delay = TimeSpan.FromSeconds(Math.Min(_maxRetryDelay.TotalSeconds, Math.Pow(2, Math.Min(change.Attempts, 20))));
        change.NextAttemptUtc = _clock.UtcNow + delay;
        _journal.Update(change);
        lock (_gate)
        {
            if (_owed.ContainsKey(change.Id))
            {
                _owed[change.Id] = change.Clone();
                if (endpointUnreachable)
                {
                    _waitingForEndpoint.Add(change.Id);
                }
                else
                {
                    _waitingForEndpoint.Remove(change.Id);
                }
            }
        }
    }

    /// <summary>
    /// Changes not tried because the endpoint just failed to answer another: no attempt is counted, and they wait for
    /// the endpoint's answer (<see cref="EndpointAnswered"/>, or the one change that tries it every
    /// <see cref="EndpointTryInterval"/>), at the latest the drive's longest retry delay.
    /// </summary>
    public void WaitForEndpoint(IEnumerable<BucketChange> untried)
    {
        var next = _clock.UtcNow + _maxRetryDelay;
        lock (_gate)
        {
            foreach (var change in untried)
            {
                if (_owed.TryGetValue(change.Id, out var owedChange))
                {
                    owedChange.NextAttemptUtc = next;
                    _waitingForEndpoint.Add(change.Id);
                }
            }
        }
    }

    /// <summary>The endpoint answered (an upload or a change went through): what waited only for it is due now.</summary>
    public void EndpointAnswered()
    {
        lock (_gate)
        {
            foreach (var id in _waitingForEndpoint)
            {
                if (_owed.TryGetValue(id, out var change))
                {
                    change.NextAttemptUtc = null;
                }
            }
            _waitingForEndpoint.Clear();
        }
    }
}
