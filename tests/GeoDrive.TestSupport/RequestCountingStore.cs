using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.TestSupport;

/// <summary>
/// The real store, counting the HEADs and GETs the engine asks of the bucket, per key (a spy for
/// <see cref="DriveRig"/>'s storeInFront: every call goes through unchanged).
/// </summary>
public sealed class RequestCountingStore(IObjectStore inner) : ForwardingStore(inner)
{
    private readonly ConcurrentDictionary<string, int> _heads = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, int> _gets = new(StringComparer.Ordinal);

    public int Heads(string key) => _heads.GetValueOrDefault(key);

    public int Gets(string key) => _gets.GetValueOrDefault(key);

    public override Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default)
    {
        _heads.AddOrUpdate(key, 1, (_, n) => n + 1);
        return base.HeadAsync(key, cancellationToken);
    }

    public override Task GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
    {
        _gets.AddOrUpdate(key, 1, (_, n) => n + 1);
        return base.GetAsync(key, destination, offset, length, expected, cancellationToken);
    }
}
