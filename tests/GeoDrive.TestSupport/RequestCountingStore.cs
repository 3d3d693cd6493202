using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.TestSupport;

/// <summary>
/// The real store, counting the HEADs and GETs the engine asks of the bucket, per key, and its listings per prefix (a spy for
/// <see cref="DriveRig"/>'s storeInFront: every call goes through unchanged).
/// </summary>
public sealed class RequestCountingStore(IObjectStore inner) : ForwardingStore(inner)
{
    private readonly ConcurrentDictionary<string, int> _heads = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, int> _gets = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, int> _lists = new(StringComparer.Ordinal);

    public int Heads(string key) => _heads.GetValueOrDefault(key);

    public int Gets(string key) => _gets.GetValueOrDefault(key);

    /// <summary>HEADs of every key that starts with <paramref name="prefix"/>.</summary>
    public int HeadsUnder(string prefix) => _heads.Where(h => h.Key.StartsWith(prefix, StringComparison.Ordinal)).Sum(h => h.Value);

    /// <summary>Listings that started at <paramref name="prefix"/> (each may be several pages).</summary>
    public int Lists(string prefix) => _lists.GetValueOrDefault(prefix);

    public override IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default)
    {
        _lists.AddOrUpdate(prefix, 1, (_, n) => n + 1);
        return base.ListAsync(prefix, recursive, cancellationToken);
    }

    public override Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default)
    {
        _heads.AddOrUpdate(key, 1, (_, n) => n + 1);
        return base.HeadAsync(key, cancellationToken);
    }

    public override Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
    {
        _gets.AddOrUpdate(key, 1, (_, n) => n + 1);
        return base.GetAsync(key, destination, offset, length, expected, cancellationToken);
    }
}
