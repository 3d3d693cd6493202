using System.Collections.Concurrent;
using GeoDrive.Core.Model;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// What local renames leave in the bucket until it catches up (docs/architecture.md, "Transitions and their locks", Rename):
/// keys renamed away from, which bucket sync never brings back as new files (and the version left there, which a
/// file renamed onto the name replaces without a conflict); keys whose bytes a renamed stub
/// still stands for, which nothing may overwrite or delete while it does; and stubs renamed to a name kept
/// local, which the tick brings home. Held in memory: recovery rebuilds it from the index and the stubs' own
/// marks at every start (the owed copies and deletes themselves are in the bucket journal).
/// </summary>
/// <param name="entryOf">The index's entry of a path (a claim is checked against it before it keeps a key).</param>
/// <param name="keyFor">The key a drive path is uploaded to.</param>
public sealed class RenamedKeys(Func<string, FileEntry?> entryOf, Func<string, string> keyFor)
{
    private readonly ConcurrentDictionary<string, byte> _left = new(StringComparer.Ordinal);
    // Key -> the path of the stub whose only bucket copy it holds.
    private readonly ConcurrentDictionary<string, string> _held = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, byte> _comingHome = new(StringComparer.Ordinal);
    // Paths being renamed (see Moving): their entries have left the old names, their holds not yet.
    private readonly ConcurrentDictionary<string, byte> _moving = new(StringComparer.Ordinal);
    // Key -> the version (ETag) a file renamed away from it knew there: a file later renamed onto the name
    // replaces that version, which is this drive's own doing, never another site's change.
    private readonly ConcurrentDictionary<string, string> _leftVersions = new(StringComparer.Ordinal);

    /// <summary>
    /// A file was renamed away from <paramref name="key"/>: its object is no new file to sync down, and the
    /// version it knew there (<paramref name="etag"/>) is one an upload to the key may replace.
    /// </summary>
    public void Left(string? key, string? etag)
    {
        if (key is null)
        {
            return;
        }
        _left[key] = 0;
        if (etag is not null)
        {
            _leftVersions[key] = etag;
        }
    }

    /// <summary>
    /// A file renamed onto a name replaced the file there, whose object under <paramref name="key"/> was the version
    /// <paramref name="etag"/>: an upload to the key may replace it (the user replaced that file), as a version left
    /// by a rename away. The key is no tombstone: a file lives under it.
    /// </summary>
    public void ReplacedAt(string key, string? etag)
    {
        if (etag is not null)
        {
            _leftVersions[key] = etag;
        }
    }

    /// <summary>The version a file renamed away from <paramref name="key"/> (or replaced under its name) knew there, if any is still remembered.</summary>
    public string? LeftVersion(string key) => _leftVersions.TryGetValue(key, out var etag) ? etag : null;

    /// <summary>The key's object was replaced by an upload or deleted: the version left there is gone.</summary>
    public void VersionGone(string key) => _leftVersions.TryRemove(key, out _);

    /// <summary>The key is done with (deleted, or a file lives under it again).</summary>
    public void Forget(string key) => _left.TryRemove(key, out _);

    public bool WasLeft(string key) => _left.ContainsKey(key);

    public bool AnyLeftUnder(string prefixKey) =>
        !_left.IsEmpty && _left.Keys.Any(k => k.StartsWith(prefixKey, StringComparison.Ordinal));

    /// <summary>
    /// A stub (or a clean file) whose bytes are under <see cref="FileEntry.ObjectKey"/>: under another name's key
    /// that key is held for it; under its own, any hold on that key ends.
    /// </summary>
    public void Track(FileEntry stub)
    {
        if (stub.ObjectKey is not { } key)
        {
            return;
        }
        if (key == keyFor(stub.Path))
        {
            _held.TryRemove(key, out _);
        }
        else
        {
            _held[key] = stub.Path;
        }
    }

    /// <summary>
    /// A file or folder is renamed, under the path locks of both names: <paramref name="moveIndex"/> moves the index, and the
    /// keys its files hold are then held by their new names, before those locks are let go. Whoever waited for the old
    /// name's lock to rescue a key's bytes finds where they went, and <see cref="IsStillNeeded"/> never takes a holder
    /// between its entry's move and its hold's for one that is gone. Returns what <paramref name="moveIndex"/> returned.
    /// </summary>
    public int Moving(string oldPath, string newPath, bool isDirectory, Func<int> moveIndex)
    {
        _moving[oldPath] = 0;
        try
        {
            var moved = moveIndex();
            foreach (var (key, holder) in _held)
            {
                if (holder == oldPath)
                {
                    _held.TryUpdate(key, newPath, holder);
                }
                else if (isDirectory && holder.StartsWith(oldPath + "/", StringComparison.Ordinal))
                {
                    _held.TryUpdate(key, newPath + holder[oldPath.Length..], holder);
                }
            }
            return moved;
        }
        finally
        {
            _moving.TryRemove(oldPath, out _);
        }
    }

    private bool BeingMoved(string path) =>
        !_moving.IsEmpty && _moving.Keys.Any(moving => path == moving || path.StartsWith(moving + "/", StringComparison.Ordinal));

    /// <summary>Whether a renamed file holds <paramref name="key"/> (as far as this drive last heard).</summary>
    public bool IsHeld(string key) => _held.ContainsKey(key);

    /// <summary>The path of the stub that holds <paramref name="key"/>, if any.</summary>
    public string? HolderOf(string key) => _held.TryGetValue(key, out var path) ? path : null;

    /// <summary>
    /// Whether a renamed file still has its only bucket copy under <paramref name="key"/>. Checked against the
    /// index, so a hold left behind (the file was uploaded anew or deleted) never keeps an old key for ever; such a
    /// hold is dropped here. A holder being renamed (<see cref="Moving"/>) is missing from the index for a moment
    /// before its hold follows it: it still needs the key, and a hold that moved on meanwhile is asked about anew.
    /// </summary>
    public bool IsStillNeeded(string key)
    {
        while (_held.TryGetValue(key, out var holder))
        {
            if (entryOf(holder) is { State: FileState.Stubbed or FileState.Recalling or FileState.Cached } entry && entry.ObjectKey == key)
            {
                return true;
            }
            if (BeingMoved(holder))
            {
                return true;
            }
            if (_held.TryRemove(new KeyValuePair<string, string>(key, holder)))
            {
                return false;
            }
        }
        return false;
    }

    /// <summary>The file at <paramref name="path"/> no longer needs <paramref name="key"/> (its bytes are local or under its own key).</summary>
    public void Release(string key, string path) => _held.TryRemove(new KeyValuePair<string, string>(key, path));

    /// <summary>A stub renamed to a name kept local: the tick recalls it (a rename never waits on the network).</summary>
    public void BringHome(string path) => _comingHome[path] = 0;

    /// <summary>Stubs still to bring home.</summary>
    public IReadOnlyCollection<string> ComingHome => [.. _comingHome.Keys];

    /// <summary>Brought home, renamed on or deleted: no longer the tick's to recall.</summary>
    public void CameHome(string path) => _comingHome.TryRemove(path, out _);
}
