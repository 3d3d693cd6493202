namespace GeoDrive.Mount.Fuse;

/// <summary>
/// The names of files the kernel may still hold, least recently used first (looked up or closed through the mount), kept
/// to a budget (docs/decisions/0036-names-the-kernel-keeps.md). The kernel keeps a dentry and an inode for every name it
/// looked up until memory runs short, and libfuse's high-level API keeps a node for each of them in the service, so a
/// mount that wrote 100,000 files, or a scan that listed them with their sizes, held 100,000 of each. Past the budget
/// the least recently used names are told to the kernel to forget, a batch at a time (<c>forget</c>: FUSE's
/// notify_inval_entry, given its folder's node from <c>folderNode</c>); the kernel then drops each name and sends FORGET,
/// and libfuse frees its node. Only files are told, never folders (a folder can be a process's working directory). The
/// calls into the kernel run on a thread of their own: a notify waits for the folder's lock, which a request in flight
/// may hold until the service answers it.
/// </summary>
internal sealed class KernelNames : IDisposable
{
    /// <summary>Names waiting to be told at most; past it a name is left to the kernel's own reclaim (the thread is stuck or behind).</summary>
    public const int MaxWaiting = 65_536;

    /// <summary>The batch for a budget: a thirty-second of it (256 for the default 8,192), at least 1 and at most 256.</summary>
    public static int BatchFor(int budget) => Math.Clamp(budget / 32, 1, 256);

    private readonly int _budget;
    private readonly int _batch;
    private readonly Func<string, ulong?> _folderNode;
    private readonly Func<ulong, string, int> _forget;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, LinkedListNode<string>> _byPath = new(StringComparer.Ordinal);
    private readonly LinkedList<string> _used = new();
    private readonly Queue<string> _toForget = new();
    private readonly HashSet<string> _waiting = new(StringComparer.Ordinal);
    private readonly SemaphoreSlim _wake = new(0);
    private Thread? _worker;
    private bool _working;
    private bool _stopped;
    private long _forgotten;
    private TaskCompletionSource? _idle;

    /// <param name="budget">Names kept; past it the least recently used are forgotten.</param>
    /// <param name="batch">
    /// Names past the budget that wait before the thread tells them, together: one wake of the thread, and one FORGET
    /// from the kernel for many names, instead of one of each per name looked up (1 tells each at once).
    /// </param>
    /// <param name="folderNode">The kernel's node id of a folder (a path below the mount, "" for its root); null if there is none.</param>
    /// <param name="forget">Tells the kernel to forget a name in a folder (by its node id): 0, or a negative errno.</param>
    public KernelNames(int budget, int batch, Func<string, ulong?> folderNode, Func<ulong, string, int> forget)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(budget);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(batch);
        _budget = budget;
        _batch = batch;
        _folderNode = folderNode;
        _forget = forget;
    }

    /// <summary>Names the kernel has been told to forget, and that it held.</summary>
    public long Forgotten => Interlocked.Read(ref _forgotten);

    /// <summary>Names past the budget waiting to be told.</summary>
    public int Waiting
    {
        get
        {
            lock (_gate)
            {
                return _toForget.Count;
            }
        }
    }

    /// <summary>Names kept now.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _byPath.Count;
            }
        }
    }

    /// <summary>
    /// A file's name was used (its path below the mount): its attributes were asked for, which is how the kernel's lookup
    /// of a name reaches the service, or a handle of it was closed. It is the most recent; the oldest past the budget go.
    /// </summary>
    public void Used(string path)
    {
        lock (_gate)
        {
            if (_stopped)
            {
                return;
            }
            if (_byPath.TryGetValue(path, out var node))
            {
                _used.Remove(node);
                _used.AddLast(node);
            }
            else
            {
                _byPath[path] = _used.AddLast(path);
            }
            while (_byPath.Count > _budget)
            {
                var oldest = _used.First!;
                _used.RemoveFirst();
                _byPath.Remove(oldest.Value);
                // A name used again while it waited, and gone past the budget again, waits in its first place.
                if (_toForget.Count < MaxWaiting && _waiting.Add(oldest.Value))
                {
                    _toForget.Enqueue(oldest.Value);
                }
            }
            if (_toForget.Count < _batch)
            {
                return;
            }
            _worker ??= StartWorker();
        }
        Wake();
    }

    /// <summary>One wake is enough: the thread tells every name waiting before it sleeps again.</summary>
    private void Wake()
    {
        if (_wake.CurrentCount == 0)
        {
            _wake.Release();
        }
    }

    /// <summary>A file was deleted: the kernel dropped its name itself.</summary>
    public void Deleted(string path)
    {
        lock (_gate)
        {
            RemoveLocked(path);
        }
    }

    /// <summary>A file or a folder was renamed: the names kept under the old path are kept under the new one, in the same order.</summary>
    public void Renamed(string from, string to)
    {
        lock (_gate)
        {
            // The name it replaces, if any, is gone from the kernel with the rename.
            RemoveLocked(to);
            RenameWaitingLocked(from, to);
            if (_byPath.Remove(from, out var file))
            {
                file.Value = to;
                _byPath[to] = file;
                return;
            }
            for (var node = _used.First; node is not null; node = node.Next)
            {
                if (Moved(node.Value, from, to) is { } moved)
                {
                    _byPath.Remove(node.Value);
                    node.Value = moved;
                    _byPath[moved] = node;
                }
            }
        }
    }

    /// <summary>Completes once every name past the budget so far has been told to the kernel, a batch not yet full too.</summary>
    public Task WhenToldAsync()
    {
        Task told;
        lock (_gate)
        {
            if (_stopped || (_toForget.Count == 0 && !_working))
            {
                return Task.CompletedTask;
            }
            _worker ??= StartWorker();
            _idle ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            told = _idle.Task;
        }
        Wake();
        return told;
    }

    /// <summary>Stops telling: what waits is dropped (the kernel forgets it under memory pressure), and a call under way ends first.</summary>
    public void Dispose() => Stop(Timeout.InfiniteTimeSpan);

    /// <summary>
    /// Stops telling, as <see cref="Dispose"/> does, waiting at most <paramref name="wait"/> for a call under way (a stat
    /// through the mount waits for a free FUSE thread). False if the call had not ended: it may still reach the kernel.
    /// </summary>
    public bool Stop(TimeSpan wait)
    {
        Thread? worker;
        lock (_gate)
        {
            worker = _worker;
            if (!_stopped)
            {
                _stopped = true;
                _toForget.Clear();
                _waiting.Clear();
                _idle?.TrySetResult();
                _idle = null;
            }
        }
        _wake.Release();
        return worker is null || worker.Join(wait);
    }

    /// <summary>Names waiting to be told follow a rename too: the kernel is told the name it holds now.</summary>
    private void RenameWaitingLocked(string from, string to)
    {
        if (!_toForget.Any(path => Moved(path, from, to) is not null))
        {
            return;
        }
        var waiting = _toForget.ToArray();
        _toForget.Clear();
        _waiting.Clear();
        foreach (var path in waiting)
        {
            var moved = Moved(path, from, to) ?? path;
            if (_waiting.Add(moved))
            {
                _toForget.Enqueue(moved);
            }
        }
    }

    /// <summary><paramref name="path"/> after a rename of <paramref name="from"/> (itself, or a folder above it) to <paramref name="to"/>; null if the rename leaves it.</summary>
    private static string? Moved(string path, string from, string to) =>
        path.StartsWith(from, StringComparison.Ordinal) && (path.Length == from.Length || path[from.Length] == '/')
            ? to + path[from.Length..]
            : null;

    /// <summary>For tests: the names kept now.</summary>
    internal string[] KeptNames()
    {
        lock (_gate)
        {
            return [.. _byPath.Keys];
        }
    }

    private void RemoveLocked(string path)
    {
        if (_byPath.Remove(path, out var node))
        {
            _used.Remove(node);
        }
    }

    private Thread StartWorker()
    {
        var thread = new Thread(Run) { Name = "fuse-forget", IsBackground = true };
        thread.Start();
        return thread;
    }

    private void Run()
    {
        // A folder's node id is asked once while its names go; a folder made again under the same path has a new one.
        var folders = new Dictionary<string, ulong>(StringComparer.Ordinal);
        while (true)
        {
            _wake.Wait();
            while (true)
            {
                string path;
                lock (_gate)
                {
                    if (_stopped)
                    {
                        _working = false;
                        return;
                    }
                    if (!_toForget.TryDequeue(out path!))
                    {
                        _working = false;
                        _idle?.TrySetResult();
                        _idle = null;
                        break;
                    }
                    _working = true;
                    _waiting.Remove(path);
                    if (_byPath.ContainsKey(path))
                    {
                        // Used again while it waited: the most recent again, not to be forgotten now.
                        continue;
                    }
                }
                Tell(path, folders);
            }
        }
    }

    private void Tell(string path, Dictionary<string, ulong> folders)
    {
        var slash = path.LastIndexOf('/');
        var folder = slash < 0 ? "" : path[..slash];
        var name = path[(slash + 1)..];
        if (folders.Count > 1_024)
        {
            folders.Clear();
        }
        var known = folders.TryGetValue(folder, out var node);
        if (!known)
        {
            if (_folderNode(folder) is not { } asked)
            {
                return;
            }
            node = folders[folder] = asked;
        }
        var result = _forget(node, name);
        if (result != 0 && known && _folderNode(folder) is { } now && now != node)
        {
            // The folder was made again since its node was asked for.
            folders[folder] = now;
            result = _forget(now, name);
        }
        if (result == 0)
        {
            Interlocked.Increment(ref _forgotten);
        }
    }
}
