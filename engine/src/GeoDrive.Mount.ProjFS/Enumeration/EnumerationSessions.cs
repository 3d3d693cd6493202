using System.Collections.Concurrent;
using GeoDrive.Mount.ProjFS.Naming;
using GeoDrive.Mount.ProjFS.Projection;

namespace GeoDrive.Mount.ProjFS.Enumeration;

/// <summary>How one GetDirectoryEnumeration call ended.</summary>
public enum FillResult
{
    /// <summary>Entries were added (possibly none: the listing is at its end). ProjFS gets S_OK.</summary>
    Ok,
    /// <summary>Not even one entry fitted: ProjFS gets ERROR_INSUFFICIENT_BUFFER and calls again with a bigger buffer.</summary>
    BufferTooSmall,
}

/// <summary>
/// One directory listing in progress, from StartDirectoryEnumeration to EndDirectoryEnumeration.
/// ProjFS may ask for the next page many times (each with a buffer that fills up), and may restart
/// the scan with a new search expression.
/// </summary>
public sealed class EnumerationSession
{
    private readonly Func<IReadOnlyList<ProjectedItem>> _list;
    private readonly Lock _gate = new();
    private ProjectedItem[] _items = [];
    private int _next;
    private string? _expression;
    private bool _started;

    public EnumerationSession(Guid id, string folder, Func<IReadOnlyList<ProjectedItem>> list)
    {
        Id = id;
        Folder = folder;
        _list = list;
    }

    public Guid Id { get; }

    public string Folder { get; }

    /// <summary>The search expression captured at the first call (or the last restart); "*" if none was given.</summary>
    public string? SearchExpression => _expression;

    /// <summary>
    /// Adds entries from where the last call stopped. The rules ProjFS sets: the search expression
    /// is taken on the first call and on a restart (later calls' expressions are ignored); when the
    /// buffer is full (<paramref name="tryAdd"/> returns false) the entry that did not fit is the
    /// first of the next call, so nothing is lost or repeated; if nothing fitted at all the answer is
    /// <see cref="FillResult.BufferTooSmall"/>. <paramref name="singleEntry"/> stops after one entry.
    /// </summary>
    public FillResult Fill(string? searchExpression, bool restartScan, bool singleEntry, Func<ProjectedItem, bool> tryAdd)
    {
        lock (_gate)
        {
            if (!_started || restartScan)
            {
                _started = true;
                _expression = string.IsNullOrEmpty(searchExpression) ? "*" : searchExpression;
                // A restart sees the folder as it is now: entries made meanwhile appear.
                _items = [.. _list().OrderBy(i => i.Name, ProjFsNameComparer.Instance)];
                _next = 0;
            }
            var added = 0;
            while (_next < _items.Length)
            {
                var item = _items[_next];
                if (!ProjFsWildcard.IsMatch(item.Name, _expression))
                {
                    _next++;
                    continue;
                }
                if (!tryAdd(item))
                {
                    return added == 0 ? FillResult.BufferTooSmall : FillResult.Ok;
                }
                _next++;
                added++;
                if (singleEntry)
                {
                    break;
                }
            }
            return FillResult.Ok;
        }
    }
}

/// <summary>The listings in progress, by the enumeration id ProjFS gives each one.</summary>
public sealed class EnumerationSessions
{
    private readonly ConcurrentDictionary<Guid, EnumerationSession> _sessions = new();

    public int Count => _sessions.Count;

    public EnumerationSession Start(Guid id, string folder, Func<IReadOnlyList<ProjectedItem>> list)
    {
        var session = new EnumerationSession(id, folder, list);
        _sessions[id] = session;
        return session;
    }

    public EnumerationSession? Get(Guid id) => _sessions.GetValueOrDefault(id);

    public bool End(Guid id) => _sessions.TryRemove(id, out _);
}
