using GeoDrive.Mount.Fuse.Native;

namespace GeoDrive.Mount.Fuse;

/// <summary>One open of a file through the mount: the cache file's descriptor, or a streamed read from the bucket.</summary>
internal sealed class OpenFile
{
    public OpenFile(OpenPath target, int descriptor, bool streamed, bool recalling = false, OpenMode mode = OpenMode.Served)
    {
        Target = target;
        Descriptor = descriptor;
        Streamed = streamed;
        Recalling = recalling;
        Mode = mode;
    }

    /// <summary>Who serves this open's data: the service, or the kernel from the cache file (FUSE passthrough).</summary>
    public OpenMode Mode { get; }

    public OpenPath Target { get; }

    /// <summary>-1 for a streamed open.</summary>
    public int Descriptor { get; }

    public bool Streamed { get; }

    /// <summary>Opened while its recall was under way: each read waits for its range first.</summary>
    public bool Recalling { get; }
}

/// <summary>
/// What an open answers the kernel besides its result: our handle, who serves its data (and the backing file's id for a
/// passthrough mode), whether its close needs no flush, and whether the kernel keeps none of its bytes (FOPEN_DIRECT_IO).
/// </summary>
internal readonly record struct OpenAnswer(ulong Handle, OpenMode Mode = OpenMode.Served, int BackingId = 0, bool NoFlush = false, bool Uncached = false)
{
    /// <summary>
    /// Whether a handle opened with <paramref name="flags"/> and answered in <paramref name="mode"/> is uncached: a writer's
    /// while the path passes through (<see cref="OpenMode.PassthroughDirect"/>), or one served by the service that can only
    /// write. Its bytes go to the service, which writes them to the cache file, as they come; a copy in the mount's page
    /// cache would only be a second one (docs/decisions/0037-write-only-handles-uncached.md). Other handles served by the
    /// service keep the page cache, and mmap with it (a write-only handle cannot be mapped).
    /// </summary>
    public static bool UncachedFor(int flags, OpenMode mode) =>
        mode == OpenMode.PassthroughDirect || (mode == OpenMode.Served && (flags & LibC.OAccMode) == LibC.OWrOnly);
}

/// <summary>Who serves an open's data: the service (every read and write comes to it), or the kernel from the cache file.</summary>
internal enum OpenMode
{
    /// <summary>Reads and writes come to the service; the kernel may keep the file's pages.</summary>
    Served,

    /// <summary>Reads (and mmap) go straight to the path's backing file, the cache file, in the kernel.</summary>
    Passthrough,

    /// <summary>
    /// A writer's open while the path passes through (the kernel wants every open of it to): reads and writes come to
    /// the service uncached (FOPEN_DIRECT_IO); only mmap goes to the backing file, so a shared writable map of it writes
    /// the cache file past the service, and the open counts as a change (<see cref="OpenFiles.Choose"/>).
    /// </summary>
    PassthroughDirect,
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

    /// <summary>Handles open in a passthrough mode; the kernel takes one backing file per file while any is open.</summary>
    public int PassthroughCount { get; set; }

    /// <summary>The backing file's id while <see cref="PassthroughCount"/> is above 0.</summary>
    public int BackingId { get; set; }

    /// <summary>Set from its last handle's release until the engine has heard of that close (<see cref="OpenFiles.Reported"/>).</summary>
    public TaskCompletionSource? Reporting { get; set; }
}

/// <summary>
/// The handle table. The engine is told "closed" once per path, when its last handle closes, with
/// "modified" if any handle wrote (the front-end contract), and a rename carries open handles along.
/// The engine hears a path's opens and closes in the order they happened: an open of a path, or a rename at it, waits
/// while the path's last close is still being told (the engine counts a path open or not, so a close told after a new
/// open would count the new handle closed, and the file could be uploaded and stubbed under its writer).
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
        while (true)
        {
            Task reported;
            lock (_gate)
            {
                if (!_paths.TryGetValue(path, out var target))
                {
                    target = new OpenPath(path);
                    _paths[path] = target;
                }
                if (target.Reporting is null)
                {
                    target.Count++;
                    return target;
                }
                reported = target.Reporting.Task;
            }
            reported.Wait();
        }
    }

    /// <summary>Returns once no last close at or under <paramref name="from"/> or <paramref name="to"/> is still being told: a rename waits for them.</summary>
    public void WaitForReports(string from, string to)
    {
        while (true)
        {
            Task? reported;
            lock (_gate)
            {
                reported = _paths.Values.FirstOrDefault(p => p.Reporting is not null && (IsAtOrUnder(p.Path, from) || IsAtOrUnder(p.Path, to)))?.Reporting!.Task;
            }
            if (reported is null)
            {
                return;
            }
            reported.Wait();
        }
    }

    private static bool IsAtOrUnder(string path, string folder) => path == folder || path.StartsWith(folder + "/", StringComparison.Ordinal);

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

    /// <summary>
    /// How this open of <paramref name="target"/> (already counted by <see cref="Acquire"/>) is served, and the backing
    /// file's id for a passthrough mode. The kernel refuses a passthrough open while the file is open otherwise, and any
    /// other open while it is open in passthrough; so a path passes through only when this is its only open, and once
    /// it does every open of it does, a writer's as <see cref="OpenMode.PassthroughDirect"/> (which marks the file changed).
    /// An open that may pass (<paramref name="readOnlyLocal"/>: for reading, with every byte in the cache file) registers
    /// the backing file through <paramref name="register"/> (0: refused, served as before).
    /// </summary>
    public OpenMode Choose(OpenPath target, bool readOnlyLocal, Func<int> register, out int backingId)
    {
        lock (_gate)
        {
            backingId = 0;
            if (target.PassthroughCount > 0)
            {
                target.PassthroughCount++;
                backingId = target.BackingId;
                if (readOnlyLocal)
                {
                    return OpenMode.Passthrough;
                }
                // A shared writable map of this handle writes the cache file without a word to the service: the file
                // counts as changed and is hashed whole after its last close, which the kernel sends only once the map
                // is gone.
                target.Modified = true;
                target.Digest?.Dispose();
                target.Digest = null;
                return OpenMode.PassthroughDirect;
            }
            if (!readOnlyLocal || target.Count != 1)
            {
                return OpenMode.Served;
            }
            var id = register();
            if (id <= 0)
            {
                return OpenMode.Served;
            }
            target.PassthroughCount = 1;
            target.BackingId = backingId = id;
            return OpenMode.Passthrough;
        }
    }

    /// <summary>A passthrough handle of <paramref name="target"/> was released: the backing file's id to drop when it was the last, else 0.</summary>
    public int EndPassthrough(OpenPath target)
    {
        lock (_gate)
        {
            if (--target.PassthroughCount > 0)
            {
                return 0;
            }
            var id = target.BackingId;
            target.BackingId = 0;
            return id;
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
            // Kept in the table until the engine has heard of the close: opens of the path wait until then.
            target.Reporting = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return true;
        }
    }

    /// <summary>The engine has heard of <paramref name="target"/>'s last close (or failed to): the path leaves the table, and opens waiting for it go on.</summary>
    public void Reported(OpenPath target)
    {
        TaskCompletionSource? reporting;
        lock (_gate)
        {
            if (_paths.TryGetValue(target.Path, out var current) && ReferenceEquals(current, target))
            {
                _paths.Remove(target.Path);
            }
            reporting = target.Reporting;
            target.Reporting = null;
        }
        reporting?.SetResult();
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
            var moving = _paths.Values.Where(p => IsAtOrUnder(p.Path, from)).ToList();
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
