namespace GeoDrive.Mount.Fuse;

/// <summary>
/// The names of files closed through the mount that the kernel may still hold, least recently closed first, kept to a
/// budget (docs/decisions/0036-names-the-kernel-keeps.md). The kernel keeps a dentry and an inode for every name it
/// looked up until memory runs short, and libfuse's high-level API keeps a node for each of them in the service, so a
/// mount that wrote 100,000 files held 100,000 of each. Past the budget the least recently closed name is told to the
/// kernel to forget (<c>forget</c>: FUSE's notify_inval_entry, given its folder's node from <c>folderNode</c>); the
/// kernel then drops the name and sends FORGET, and libfuse frees its node. Only files are told, never folders (a
/// folder can be a process's working directory). The calls into the kernel run on a thread of their own: a notify waits
/// for the folder's lock, which a request in flight may hold until the service answers it.
/// </summary>
internal sealed class KernelNames : IDisposable
{
    /// <summary>Names waiting to be told at most; past it a name is left to the kernel's own reclaim (the thread is stuck or behind).</summary>
    public const int MaxWaiting = 65_536;

    private readonly int _budget;
    private readonly Func<string, ulong?> _folderNode;
    private readonly Func<ulong, string, int> _forget;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, LinkedListNode<string>> _byPath = new(StringComparer.Ordinal);
    private readonly LinkedList<string> _closed = new();
    private readonly Queue<string> _toForget = new();
    private readonly SemaphoreSlim _wake = new(0);
    private Thread? _worker;
    private bool _working;
    private bool _stopped;
    private long _forgotten;
    private TaskCompletionSource? _idle;

    /// <param name="budget">Names kept; past it the least recently closed are forgotten.</param>
    /// <param name="folderNode">The kernel's node id of a folder (a path below the mount, "" for its root); null if there is none.</param>
    /// <param name="forget">Tells the kernel to forget a name in a folder (by its node id): 0, or a negative errno.</param>
    public KernelNames(int budget, Func<string, ulong?> folderNode, Func<ulong, string, int> forget)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(budget);
        _budget = budget;
        _folderNode = folderNode;
        _forget = forget;
    }

    /// <summary>Names the kernel has been told to forget, and that it held.</summary>
    public long Forgotten => Interlocked.Read(ref _forgotten);

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

    /// <summary>A file's handle was closed (its path below the mount): it is the most recent; the oldest past the budget go.</summary>
    public void Closed(string path)
    {
        lock (_gate)
        {
            if (_stopped)
            {
                return;
            }
            if (_byPath.TryGetValue(path, out var node))
            {
                _closed.Remove(node);
                _closed.AddLast(node);
            }
            else
            {
                _byPath[path] = _closed.AddLast(path);
            }
            if (_byPath.Count <= _budget)
            {
                return;
            }
            while (_byPath.Count > _budget)
            {
                var oldest = _closed.First!;
                _closed.RemoveFirst();
                _byPath.Remove(oldest.Value);
                if (_toForget.Count < MaxWaiting)
                {
                    _toForget.Enqueue(oldest.Value);
                }
            }
            _worker ??= StartWorker();
        }
        // One wake is enough: the thread tells every name waiting before it sleeps again.
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
            if (_byPath.Remove(from, out var file))
            {
                file.Value = to;
                _byPath[to] = file;
                return;
            }
            var below = from + "/";
            if (_byPath.Count == 0)
            {
                return;
            }
            for (var node = _closed.First; node is not null; node = node.Next)
            {
                if (node.Value.StartsWith(below, StringComparison.Ordinal))
                {
                    _byPath.Remove(node.Value);
                    node.Value = to + node.Value[from.Length..];
                    _byPath[node.Value] = node;
                }
            }
        }
    }

    /// <summary>Completes once every name past the budget so far has been told to the kernel.</summary>
    public Task WhenToldAsync()
    {
        lock (_gate)
        {
            if (_stopped || (_toForget.Count == 0 && !_working))
            {
                return Task.CompletedTask;
            }
            _idle ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _idle.Task;
        }
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
                _idle?.TrySetResult();
                _idle = null;
            }
        }
        _wake.Release();
        return worker is null || worker.Join(wait);
    }

    private void RemoveLocked(string path)
    {
        if (_byPath.Remove(path, out var node))
        {
            _closed.Remove(node);
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
