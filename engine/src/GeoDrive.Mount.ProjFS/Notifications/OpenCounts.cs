using GeoDrive.Mount.ProjFS.Naming;

namespace GeoDrive.Mount.ProjFS.Notifications;

/// <summary>
/// Handles open per file, as ProjFS notifications report them (opened / created / overwritten add one,
/// each handle-closed notification takes one away), so that an open file is never dehydrated.
/// Names compare as NTFS compares them; a rename carries the count along.
/// </summary>
public sealed class OpenCounts
{
    private readonly Lock _gate = new();
    private readonly Dictionary<string, int> _counts = new(ProjFsNameComparer.Instance);

    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _counts.Count;
            }
        }
    }

    public void Opened(string path)
    {
        lock (_gate)
        {
            _counts[path] = _counts.GetValueOrDefault(path) + 1;
        }
    }

    /// <summary>One handle closed; true when it was the last.</summary>
    public bool Closed(string path)
    {
        lock (_gate)
        {
            if (!_counts.TryGetValue(path, out var count) || count <= 1)
            {
                _counts.Remove(path);
                return true;
            }
            _counts[path] = count - 1;
            return false;
        }
    }

    public bool IsOpen(string path)
    {
        lock (_gate)
        {
            return _counts.ContainsKey(path);
        }
    }

    /// <summary>A file or folder was renamed: counts at or under <paramref name="from"/> move along.</summary>
    public void Renamed(string from, string to)
    {
        lock (_gate)
        {
            var moving = _counts.Keys
                .Where(p => ProjFsNameComparer.Instance.Equals(p, from)
                            || (p.Length > from.Length && p[from.Length] == '/' && ProjFsNameComparer.Instance.Equals(p[..from.Length], from)))
                .ToList();
            foreach (var path in moving)
            {
                var count = _counts[path];
                _counts.Remove(path);
                _counts[to + path[from.Length..]] = count;
            }
        }
    }
}
