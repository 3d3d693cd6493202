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
    private readonly HashSet<string> _keys = new(StringComparer.Ordinal);
    private readonly Queue<string> _order = new();

    /// <summary>The marker <paramref name="key"/> was deleted from the bucket.</summary>
    public void Deleted(string key)
    {
        lock (_gate)
        {
            if (!_keys.Add(key))
            {
                return;
            }
            _order.Enqueue(key);
            while (_order.Count > Capacity)
            {
                _keys.Remove(_order.Dequeue());
            }
        }
    }

    /// <summary>The marker <paramref name="key"/> was written again (its folder made again here).</summary>
    public void Written(string key)
    {
        lock (_gate)
        {
            // Left in the queue: it only ages out earlier than the others.
            _keys.Remove(key);
        }
    }

    public bool WasDeleted(string key)
    {
        lock (_gate)
        {
            return _keys.Contains(key);
        }
    }
}
