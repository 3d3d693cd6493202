namespace GeoDrive.Mount.Fuse;

/// <summary>One open of a file through the mount: the cache file's descriptor, or a streamed read from the bucket.</summary>
internal sealed class OpenFile
{
    public OpenFile(OpenPath target, int descriptor, bool streamed, bool recalling = false)
    {
        Target = target;
        Descriptor = descriptor;
        Streamed = streamed;
        Recalling = recalling;
    }

    public OpenPath Target { get; }

    /// <summary>-1 for a streamed open.</summary>
    public int Descriptor { get; }

    public bool Streamed { get; }

    /// <summary>Opened while its recall was under way: each read waits for its range first.</summary>
    public bool Recalling { get; }
}

/// <summary>A path with open handles: how many, and whether any of them changed the file.</summary>
internal sealed class OpenPath
{
    public OpenPath(string path) => Path = path;

    /// <summary>Drive-relative; follows renames of the file or of a folder above it.</summary>
    public string Path { get; set; }

    public int Count { get; set; }

    public bool Modified { get; set; }

    /// <summary>The checksums of the file as its handles wrote it, from empty; null when it was not emptied by one of them.</summary>
    public SequentialDigest? Digest { get; set; }
}

/// <summary>
/// The handle table. The engine is told "closed" once per path, when its last handle closes, with
/// "modified" if any handle wrote (the front-end contract), and a rename carries open handles along.
/// </summary>
internal sealed class OpenFiles
{
    private readonly Lock _gate = new();
    private readonly Dictionary<ulong, OpenFile> _handles = [];
    private readonly Dictionary<string, OpenPath> _paths = new(StringComparer.Ordinal);
    private ulong _next;

    /// <summary>Counts one more open of <paramref name="path"/>; pair with <see cref="Release"/>.</summary>
    public OpenPath Acquire(string path)
    {
        lock (_gate)
        {
            if (!_paths.TryGetValue(path, out var target))
            {
                target = new OpenPath(path);
                _paths[path] = target;
            }
            target.Count++;
            return target;
        }
    }

    public ulong Add(OpenFile file)
    {
        lock (_gate)
        {
            var id = ++_next;
            _handles[id] = file;
            return id;
        }
    }

    public OpenFile? Get(ulong handle)
    {
        lock (_gate)
        {
            return _handles.GetValueOrDefault(handle);
        }
    }

    public OpenFile? Remove(ulong handle)
    {
        lock (_gate)
        {
            return _handles.Remove(handle, out var file) ? file : null;
        }
    }

    public void MarkModified(OpenPath target)
    {
        lock (_gate)
        {
            target.Modified = true;
        }
    }

    /// <summary>
    /// The file is empty now (made, cut, or found empty by a handle of <paramref name="target"/>): with no other handle
    /// open it is hashed as it is written from here. With others, whose writes may still arrive, it keeps checksums that
    /// hold no byte yet (still of an empty file) and otherwise is not hashed at all.
    /// </summary>
    public void Emptied(OpenPath target)
    {
        lock (_gate)
        {
            if (target.Count > 1 && target.Digest is { Length: 0 })
            {
                return;
            }
            target.Digest?.Dispose();
            target.Digest = target.Count == 1 ? new SequentialDigest() : null;
        }
    }

    /// <summary>
    /// Whether the path was changed since the last flush, clearing the mark: a write after this sets it
    /// again, so a change is never lost between a flush's upload and the next one.
    /// </summary>
    public bool TakeModified(OpenPath target)
    {
        lock (_gate)
        {
            var modified = target.Modified;
            target.Modified = false;
            return modified;
        }
    }

    /// <summary>
    /// Drops one open; returns true (with the path, whether it was modified and, when it was written from empty, the
    /// checksums of what was written, for the caller to finish outside this table's lock) when it was the last.
    /// </summary>
    public bool Release(OpenPath target, bool modified, out string path, out bool anyModified, out SequentialDigest? written)
    {
        lock (_gate)
        {
            target.Modified |= modified;
            target.Count--;
            path = target.Path;
            anyModified = target.Modified;
            written = null;
            if (target.Count > 0)
            {
                return false;
            }
            written = anyModified ? target.Digest : null;
            if (written is null)
            {
                target.Digest?.Dispose();
            }
            target.Digest = null;
            if (_paths.TryGetValue(target.Path, out var current) && ReferenceEquals(current, target))
            {
                _paths.Remove(target.Path);
            }
            return true;
        }
    }

    public bool IsOpen(string path)
    {
        lock (_gate)
        {
            return _paths.ContainsKey(path);
        }
    }

    /// <summary>A file or folder was renamed: open paths at or under <paramref name="from"/> move along.</summary>
    public void Rename(string from, string to)
    {
        lock (_gate)
        {
            var moving = _paths.Values
                .Where(p => p.Path == from || p.Path.StartsWith(from + "/", StringComparison.Ordinal))
                .ToList();
            foreach (var open in moving)
            {
                _paths.Remove(open.Path);
                open.Path = to + open.Path[from.Length..];
                _paths[open.Path] = open;
            }
        }
    }

    public int HandleCount
    {
        get
        {
            lock (_gate)
            {
                return _handles.Count;
            }
        }
    }
}
