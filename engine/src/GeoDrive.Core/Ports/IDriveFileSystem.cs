using GeoDrive.Core.Model;

namespace GeoDrive.Core.Ports;

/// <summary>
/// The front-end contract (docs/architecture.md, "The front-end contract"): what a front end (FUSE, ProjFS) asks the engine, with the
/// caller of each operation. File data always lives in <see cref="CachePath"/>; a front end serves
/// bytes from there only after <see cref="OpenAsync"/> answered <see cref="OpenDecision.Local"/>.
/// Paths are drive-relative, '/'-separated, without a leading '/'; "" is the drive root.
/// </summary>
public interface IDriveFileSystem
{
    /// <summary>The local folder that holds the files' data and the stubs.</summary>
    string CachePath { get; }

    /// <summary>A directory is about to be listed (the engine may sync it with the bucket first).</summary>
    ValueTask BeforeEnumerateAsync(string path, Caller caller, CancellationToken cancellationToken = default);

    /// <summary>A name is missing locally. True when the engine made it exist in the cache (found in the bucket).</summary>
    ValueTask<bool> LookupMissingAsync(string path, Caller caller, CancellationToken cancellationToken = default);

    /// <summary>
    /// A file is being opened. For a stub the engine recalls before answering <see cref="OpenDecision.Local"/>,
    /// or answers <see cref="OpenDecision.Stream"/> (serve reads with <see cref="ReadStreamedAsync"/>) or
    /// <see cref="OpenDecision.Deny"/> (fail with EACCES) by the caller's process rule.
    /// </summary>
    ValueTask<OpenDecision> OpenAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default);

    /// <summary>
    /// As <see cref="OpenAsync"/>, for a front end that can serve a file while its bytes arrive: a stub
    /// above the multipart threshold opened for reading (by a caller whose rule recalls) is answered
    /// <see cref="OpenDecision.Recalling"/> as soon as its recall has started. Opens for writing or
    /// truncation still wait for the whole recall.
    /// </summary>
    ValueTask<OpenDecision> OpenStreamingAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default);

    /// <summary>
    /// For a file opened <see cref="OpenDecision.Recalling"/>: completes when [offset, offset+length) is in
    /// the cache file (clamped to the file's size; the requested range is fetched first). Completes at
    /// once when the file is no longer recalling; fails when its recall failed (the file is a stub again).
    /// </summary>
    ValueTask WaitForRangeAsync(string path, long offset, long length, CancellationToken cancellationToken = default);

    /// <summary>Reads a range of a stub straight from the bucket; the cache is not touched. Returns bytes read (0 at end).</summary>
    ValueTask<int> ReadStreamedAsync(string path, long offset, Memory<byte> buffer, CancellationToken cancellationToken = default);

    /// <summary>
    /// An application closed a descriptor (FUSE flush, which close(2) waits for; the last handle's
    /// <see cref="ClosedAsync"/> comes later). <paramref name="modified"/> when the file was written or
    /// truncated since the previous flush. In upload mode sync a modified file is uploaded and verified
    /// before this returns, so when close returns the object is in the bucket; in async mode nothing happens.
    /// Returns true when the engine took the change in hand (sync mode), so the front end need not report
    /// it again at the last close; false when the last close must still say "modified".
    /// </summary>
    ValueTask<bool> FlushedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default);

    /// <summary>
    /// True while a close(2) of a changed file must reach <see cref="FlushedAsync"/>: upload mode sync, where the close
    /// waits for the upload. False (async mode) when <see cref="FlushedAsync"/> would do nothing, so a front end may ask
    /// the OS not to send it (FUSE's FOPEN_NOFLUSH); the last close still reports the change. A front end reads it at
    /// each open: a handle opened before the drive turned to sync mode keeps what its open was given, and its change goes
    /// up as in async mode.
    /// </summary>
    bool ClosesUpload => true;

    /// <summary>The last handle of an open was closed; <paramref name="modified"/> when it wrote or truncated.</summary>
    ValueTask ClosedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default);

    /// <summary>
    /// As <see cref="ClosedAsync"/> with "modified", from a front end that saw every byte of the file written through
    /// its handles, each write at the file's end from empty: <paramref name="written"/> holds those bytes' checksums, so
    /// that the upload need not read the file to hash it (docs/decisions/0032-hashed-as-written.md). The engine takes them
    /// only while nothing else can have changed the file; a front end that cannot see writes (ProjFS) never calls this.
    /// </summary>
    ValueTask ClosedWrittenAsync(string path, Caller caller, WrittenDigest written, CancellationToken cancellationToken = default) =>
        ClosedAsync(path, caller, modified: true, cancellationToken);

    void Created(string path, Caller caller, bool isDirectory);

    /// <summary>The front end refused to make a name (too long for the drive, …): the drive's event log says so.</summary>
    void Refused(string path, Caller caller, Errors.GeoDriveException reason);

    void Deleted(string path, Caller caller, bool isDirectory);

    void Renamed(string oldPath, string newPath, Caller caller, bool isDirectory);

    /// <summary>
    /// A file's properties were changed through the front end (chmod, chown, utimens, setxattr, removexattr, an ACL):
    /// the engine writes them into its object's metadata when the file is clean (a changed file's upload carries them).
    /// </summary>
    void PropertiesChanged(string path, Caller caller)
    {
    }

    /// <summary>The value of the state attribute (xattr user.geodrive.state): "Dirty", "Cached", "Stubbed", … or null when the engine has no entry.</summary>
    string? GetStateAttribute(string path);

    /// <summary>
    /// True on a case-insensitive drive: a name that differs only in case from an entry of its folder is that entry
    /// (the front end resolves it before it calls the engine), and a folder shows each name once.
    /// </summary>
    bool NamesIgnoreCase { get; }

    /// <summary>True for paths the front end must hide and refuse (the engine's own folder inside the cache).</summary>
    bool IsInternalPath(string path);

    /// <summary>
    /// A file's local copy was replaced by another version from the bucket (its size, time or bytes changed
    /// under the name), or removed because the bucket's object was deleted: a front end whose OS caches
    /// attributes or pages drops them, so no read mixes the two and no stat shows a file that is gone.
    /// Raised on the thread of the open or listing that found the change, before it returns.
    /// </summary>
    event Action<string>? LocalCopyReplaced
    {
        add { }
        remove { }
    }
}

public enum OpenDecision
{
    /// <summary>Data is local: serve it from the cache file.</summary>
    Local,
    /// <summary>Serve reads from the bucket; the file stays a stub. Writes are refused.</summary>
    Stream,
    /// <summary>Refuse the open with a permission error.</summary>
    Deny,
    /// <summary>
    /// The data is arriving in the cache file (streaming recall): serve each read from the cache file
    /// after <see cref="IDriveFileSystem.WaitForRangeAsync"/> for its range.
    /// </summary>
    Recalling,
}

public enum OpenIntent
{
    Read,
    Write,
    /// <summary>Opened with O_TRUNC (or truncated to 0): old bytes are not needed, no recall.</summary>
    Truncate,
}
