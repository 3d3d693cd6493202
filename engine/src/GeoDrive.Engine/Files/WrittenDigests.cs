using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Files;

/// <summary>
/// Checksums a front end took of files as they were written (<see cref="Core.Ports.IDriveFileSystem.ClosedWrittenAsync"/>),
/// each held for the change its close made: the generation it left the file at and the file's size, time and mode then.
/// The upload takes one instead of reading the file to hash it only while both still hold, and anything that may change
/// the file without a close that says so (an open for writing, a rename, a delete) forgets it first. Kept in memory only:
/// after a restart every file is hashed by reading it (docs/decisions/0032-hashed-as-written.md).
/// </summary>
internal sealed class WrittenDigests
{
    /// <summary>At most this many are held: a new one pushes out another, whose upload then reads its file to hash it.</summary>
    public const int Capacity = 4_096;

    private readonly Lock _gate = new();
    private readonly Dictionary<string, Held> _held = new(StringComparer.Ordinal);

    /// <summary>Checksums, and the change they were taken for.</summary>
    public readonly record struct Held(WrittenDigest Digest, long Generation, LocalFile Local);

    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _held.Count;
            }
        }
    }

    /// <summary>
    /// Holds <paramref name="digest"/> for the file at <paramref name="path"/> as its close left it. Refused (and any
    /// earlier one forgotten) when its length is not the file's.
    /// </summary>
    public void Hold(string path, WrittenDigest digest, long generation, LocalFile local)
    {
        lock (_gate)
        {
            _held.Remove(path);
            if (digest.Length != local.Size)
            {
                return;
            }
            if (_held.Count >= Capacity)
            {
                // Files kept local (never uploaded) could fill it for good: any one goes.
                _held.Remove(_held.Keys.First());
            }
            _held[path] = new Held(digest, generation, local);
        }
    }

    /// <summary>What is held for the file at <paramref name="path"/>, forgotten here (a rename takes it along: <see cref="HoldRenamed"/>).</summary>
    public Held? Take(string path)
    {
        lock (_gate)
        {
            return _held.Remove(path, out var held) ? held : null;
        }
    }

    /// <summary>
    /// A file renamed to <paramref name="path"/> (at <paramref name="movedAt"/>, now at <paramref name="generation"/>,
    /// which the rename's own change made): what was held under its old name holds here, when it was for the generation the file moved at and the file is as it was.
    /// </summary>
    public void HoldRenamed(string path, Held held, long movedAt, long generation, LocalFile local)
    {
        if (held.Generation == movedAt && held.Local == local)
        {
            Hold(path, held.Digest, generation, local);
        }
    }

    /// <summary>The checksums held for the file, when it is still at that generation, size, time and mode; else null (and forgotten).</summary>
    public WrittenDigest? For(string path, long generation, LocalFile local)
    {
        lock (_gate)
        {
            if (!_held.TryGetValue(path, out var held))
            {
                return null;
            }
            if (held.Generation == generation && held.Local == local)
            {
                return held.Digest;
            }
            _held.Remove(path);
            return null;
        }
    }

    public bool Holds(string path)
    {
        lock (_gate)
        {
            return _held.ContainsKey(path);
        }
    }

    /// <summary>
    /// The file's properties changed (a new time or mode), not its bytes: what is held is for the file as it is now, when
    /// its size is still theirs. Only for a change no handle opened for writing could have made (each forgets first).
    /// </summary>
    public void Restamp(string path, LocalFile local)
    {
        lock (_gate)
        {
            if (_held.TryGetValue(path, out var held))
            {
                if (held.Local.Size == local.Size)
                {
                    _held[path] = held with { Local = local };
                }
                else
                {
                    _held.Remove(path);
                }
            }
        }
    }

    public void Forget(string path)
    {
        lock (_gate)
        {
            _held.Remove(path);
        }
    }

    /// <summary>Forgets the file at <paramref name="path"/> and every file under it (a folder renamed or deleted).</summary>
    public void ForgetAt(string path)
    {
        lock (_gate)
        {
            if (_held.Count == 0)
            {
                return;
            }
            _held.Remove(path);
            var folder = path + "/";
            foreach (var key in _held.Keys.Where(k => k.StartsWith(folder, StringComparison.Ordinal)).ToList())
            {
                _held.Remove(key);
            }
        }
    }
}
