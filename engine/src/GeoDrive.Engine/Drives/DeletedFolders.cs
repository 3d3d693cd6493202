namespace GeoDrive.Engine.Drives;

/// <summary>
/// The folder markers ("name/" keys) this run deleted from the bucket, the most recent <see cref="Capacity"/> of them.
/// Some S3 servers keep listing a folder's prefix after everything under it was deleted, when the bucket keeps versions
/// (a delimited listing that counts the delete markers: moto, SeaweedFS before 4.41); AWS S3 and
/// Ceph RGW do not. A prefix listed under one of these keys is asked once more, without a delimiter, before a folder
/// is made for it, so a folder removed here does not come back (docs/decisions.md, "folders removed here stay removed").
/// </summary>
internal sealed class DeletedFolders
{
    public const int Capacity = 4096;

    private readonly Lock _gate = new();
    // Each remembered key, with the number of the delete that put it here; the queue holds every delete in order.
    private readonly Dictionary<string, long> _keys = new(StringComparer.Ordinal);
    private readonly Queue<(string Key, long Number)> _order = new();
    private long _deletes;

    /// <summary>The marker <paramref name="key"/> was deleted from the bucket.</summary>
    public void Deleted(string key)
    {
        lock (_gate)
        {
            if (_keys.ContainsKey(key))
            {
                return;
            }
            var number = ++_deletes;
            _keys[key] = number;
            _order.Enqueue((key, number));
            while (_order.Count > Capacity)
            {
                var (oldest, itsNumber) = _order.Dequeue();
                // A key written and deleted again since is remembered by its later delete.
                if (_keys.TryGetValue(oldest, out var current) && current == itsNumber)
                {
                    _keys.Remove(oldest);
                }
            }
        }
    }

    /// <summary>The marker <paramref name="key"/> was written again (its folder made again here).</summary>
    public void Written(string key)
    {
        lock (_gate)
        {
            _keys.Remove(key);
        }
    }

    public bool WasDeleted(string key)
    {
        lock (_gate)
        {
            return _keys.ContainsKey(key);
        }
    }
}
