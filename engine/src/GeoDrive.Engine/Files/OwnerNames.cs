using System.Collections.Concurrent;
using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Files;

/// <summary>
/// User and group names by numeric id, each remembered for <see cref="Keep"/>: the C library answers every lookup
/// from a user database of files by reading /etc/passwd or /etc/group again (four system calls), and every upload asks for
/// its file's owner and group. A user or group renamed on this host reaches the objects uploaded a minute later at the latest.
/// </summary>
public sealed class OwnerNames(IClock clock)
{
    /// <summary>How long a name is kept before the C library is asked again.</summary>
    public static readonly TimeSpan Keep = TimeSpan.FromMinutes(1);

    // Ids with a name remembered, per table, before both are emptied: a host has that many users only when something is wrong.
    private const int Limit = 4_096;

    private readonly ConcurrentDictionary<uint, (string? Name, DateTimeOffset ReadUtc)> _users = new();
    private readonly ConcurrentDictionary<uint, (string? Name, DateTimeOffset ReadUtc)> _groups = new();

    /// <summary>The names the engine uses, on the system clock.</summary>
    public static OwnerNames Shared { get; } = new(SystemClock.Instance);

    /// <summary>The user name of <paramref name="uid"/> on this host, or null.</summary>
    public string? UserName(uint uid) => Remembered(_users, uid, Owners.UserName);

    /// <summary>The group name of <paramref name="gid"/> on this host, or null.</summary>
    public string? GroupName(uint gid) => Remembered(_groups, gid, Owners.GroupName);

    private string? Remembered(ConcurrentDictionary<uint, (string? Name, DateTimeOffset ReadUtc)> names, uint id, Func<uint, string?> read)
    {
        var now = clock.UtcNow;
        if (names.TryGetValue(id, out var known) && now - known.ReadUtc < Keep && now >= known.ReadUtc)
        {
            return known.Name;
        }
        var name = read(id);
        if (names.Count >= Limit)
        {
            names.Clear();
        }
        names[id] = (name, now);
        return name;
    }
}
