using System.Collections.Concurrent;
using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Files;

/// <summary>
/// User and group names by numeric id, and ids by name, each remembered for <see cref="Keep"/>: the C library answers
/// every lookup from a user database of files by reading /etc/passwd or /etc/group again (four system calls or more), and
/// every upload asks for its file's owner and group, every stub made from another site's object for their ids here. A
/// user or group renamed on this host reaches the objects uploaded, and the stubs made, a minute later at the latest.
/// </summary>
public sealed class OwnerNames(IClock clock)
{
    /// <summary>How long a name is kept before the C library is asked again.</summary>
    public static readonly TimeSpan Keep = TimeSpan.FromMinutes(1);

    // Entries a table holds before it is emptied: a host has that many users only when something is wrong, and names come
    // from other sites' objects too.
    private const int Limit = 4_096;

    private readonly ConcurrentDictionary<uint, (string? Value, DateTimeOffset ReadUtc)> _users = new();
    private readonly ConcurrentDictionary<uint, (string? Value, DateTimeOffset ReadUtc)> _groups = new();
    private readonly ConcurrentDictionary<string, (uint? Value, DateTimeOffset ReadUtc)> _userIds = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, (uint? Value, DateTimeOffset ReadUtc)> _groupIds = new(StringComparer.Ordinal);

    /// <summary>The names the engine uses, on the system clock.</summary>
    public static OwnerNames Shared { get; } = new(SystemClock.Instance);

    /// <summary>The user name of <paramref name="uid"/> on this host, or null.</summary>
    public string? UserName(uint uid) => Remembered(_users, uid, Owners.UserName);

    /// <summary>The group name of <paramref name="gid"/> on this host, or null.</summary>
    public string? GroupName(uint gid) => Remembered(_groups, gid, Owners.GroupName);

    /// <summary>The id of user <paramref name="name"/> on this host, or null.</summary>
    public uint? UserId(string name) => Remembered(_userIds, name, Owners.UserId);

    /// <summary>The id of group <paramref name="name"/> on this host, or null.</summary>
    public uint? GroupId(string name) => Remembered(_groupIds, name, Owners.GroupId);

    private TValue Remembered<TKey, TValue>(ConcurrentDictionary<TKey, (TValue Value, DateTimeOffset ReadUtc)> known, TKey key, Func<TKey, TValue> read)
        where TKey : notnull
    {
        var now = clock.UtcNow;
        if (known.TryGetValue(key, out var entry) && now - entry.ReadUtc < Keep && now >= entry.ReadUtc)
        {
            return entry.Value;
        }
        var value = read(key);
        if (known.Count >= Limit)
        {
            known.Clear();
        }
        known[key] = (value, now);
        return value;
    }
}
