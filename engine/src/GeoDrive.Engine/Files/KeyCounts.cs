using System.Collections.Concurrent;

namespace GeoDrive.Engine.Files;

/// <summary>How many holders each key has, thread-safe; a key is held while its count is above zero.</summary>
internal sealed class KeyCounts
{
    private readonly ConcurrentDictionary<string, int> _counts = new(StringComparer.Ordinal);

    public void Add(string key) => _counts.AddOrUpdate(key, 1, static (_, n) => n + 1);

    public void Remove(string key)
    {
        if (_counts.AddOrUpdate(key, 0, static (_, n) => n - 1) <= 0)
        {
            _counts.TryRemove(new KeyValuePair<string, int>(key, 0));
        }
    }

    public bool Contains(string key) => _counts.ContainsKey(key);

    /// <summary>Whether any held key starts with <paramref name="prefix"/>.</summary>
    public bool AnyUnder(string prefix) => !_counts.IsEmpty && _counts.Keys.Any(k => k.StartsWith(prefix, StringComparison.Ordinal));
}
