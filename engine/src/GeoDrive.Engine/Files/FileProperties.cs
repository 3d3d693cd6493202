using System.Runtime.InteropServices;
using GeoDrive.Core.Paths;
using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Engine.Files;

/// <summary>
/// What a file is besides its bytes, kept in its object's metadata (docs/object-layout.md, "File properties") so that a stub
/// made on another host, or after the index was lost, has it too: permission bits, owner and group, the time to the
/// nanosecond, user.* extended attributes and the POSIX access ACL. Read and applied through an open descriptor, so no link
/// is ever followed. Linux only: on Windows every call is a no-op (the analogue there is the security descriptor).
/// </summary>
/// <param name="Owner">Null when unknown (an object another tool wrote): the stub keeps the service's own.</param>
/// <param name="Attributes">The user.* extended attributes, names without "user.", the engine's own (user.geodrive.*) left out.</param>
/// <param name="Acl">The access ACL when it says more than the mode does, else null.</param>
public sealed partial record FileProperties(UnixFileMode Mode, FileTime Modified, FileOwner? Owner, IReadOnlyList<FileAttribute> Attributes, PosixAcl? Acl)
{
    private const string UserNamespace = "user.";
    private const string EngineNamespace = "user.geodrive.";

    /// <summary>On Windows, the file's attributes and security descriptor (the POSIX properties are then the defaults).</summary>
    public WindowsFileProperties? Windows { get; init; }

    /// <summary>Whether these are a version's own properties (a GeoDrive upload records its owner, or on Windows its security descriptor); another tool's object records none.</summary>
    public bool RecordsOwner => Owner is not null || Windows is not null;

    /// <summary>The properties of a cache file, or null when it is gone or this is neither Linux nor Windows.</summary>
    public static FileProperties? Read(string cacheRoot, string localPath)
    {
        if (OperatingSystem.IsWindows())
        {
            return File.Exists(localPath)
                ? new FileProperties(UnixFileMode.UserRead | UnixFileMode.UserWrite, FileTime.From(File.GetLastWriteTimeUtc(localPath)), null, [], null)
                {
                    Windows = WindowsFileProperties.Read(localPath),
                }
                : null;
        }
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }
        try
        {
            using var handle = BeneathCache.OpenHandle(cacheRoot, localPath, FileMode.Open, FileAccess.Read);
            return Read(handle);
        }
        catch (FileNotFoundException)
        {
            return null;
        }
        catch (DirectoryNotFoundException)
        {
            return null;
        }
    }

    public static FileProperties? Read(SafeFileHandle handle)
    {
        if (!OperatingSystem.IsLinux() || Native.StatxOf(handle, "", Native.AtEmptyPath, Native.StatxBasicStats, out var stat) != 0)
        {
            return null;
        }
        var attributes = new List<FileAttribute>();
        foreach (var name in Native.AttributeNames(handle).Where(n => n.StartsWith(UserNamespace, StringComparison.Ordinal)
            && !n.StartsWith(EngineNamespace, StringComparison.Ordinal)).Order(StringComparer.Ordinal))
        {
            if (Native.GetAttribute(handle, name) is { } value)
            {
                attributes.Add(new FileAttribute(name[UserNamespace.Length..], value));
            }
        }
        var acl = Native.GetAttribute(handle, PosixAcl.AttributeName) is { } raw && PosixAcl.FromAttribute(raw) is { IsExtended: true } extended ? extended : null;
        return new FileProperties(
            (UnixFileMode)(stat.Mode & 0b111_111_111),
            new FileTime(stat.MtimeSeconds, stat.MtimeNanoseconds),
            new FileOwner(stat.Uid, stat.Gid, OwnerNames.Shared.UserName(stat.Uid), OwnerNames.Shared.GroupName(stat.Gid)),
            attributes,
            acl);
    }

    /// <summary>The file's time to the nanosecond, or null.</summary>
    public static FileTime? ReadTime(SafeFileHandle handle) =>
        OperatingSystem.IsLinux() && Native.StatxOf(handle, "", Native.AtEmptyPath, Native.StatxBasicStats, out var stat) == 0
            ? new FileTime(stat.MtimeSeconds, stat.MtimeNanoseconds)
            : null;

    /// <summary>Sets the file's last write time to the nanosecond, its access time untouched.</summary>
    public static void SetTime(SafeFileHandle handle, FileTime time, string localPath)
    {
        if (OperatingSystem.IsWindows())
        {
            File.SetLastWriteTimeUtc(handle, time.ToDateTimeOffset().UtcDateTime);
            return;
        }
        if (!TrySetTime(handle, time))
        {
            throw new IOException($"The time of '{localPath}' could not be set (errno {Marshal.GetLastPInvokeError()}).");
        }
    }

    private static bool TrySetTime(SafeFileHandle handle, FileTime time) =>
        Native.FUtimens(handle, [new() { Nanoseconds = Native.UtimeOmit }, new() { Seconds = time.Seconds, Nanoseconds = time.Nanoseconds }]) == 0;

    /// <summary>
    /// Whether a cache file with these properties already has what <paramref name="recorded"/> (another version's) says:
    /// permission bits, time, ACL, each recorded attribute with its value, and the owner where this process may set one.
    /// Attributes the file has beyond the recorded ones are not counted (a version may record fewer: trimmed to fit).
    /// </summary>
    public bool Holds(FileProperties recorded, bool privileged) =>
        ((int)Mode & 0b111_111_111) == ((int)recorded.Mode & 0b111_111_111)
        && Modified == recorded.Modified
        && (!privileged || recorded.Owner is null || (Owner is { } owner && recorded.Owner.OnThisHost() == (owner.Uid, owner.Gid)))
        && Acl?.ToString() == recorded.Acl?.ToString()
        && recorded.Attributes.All(a => Attributes.Any(b => b.Name == a.Name && b.Value.AsSpan().SequenceEqual(a.Value)))
        && (recorded.Windows is null || recorded.Windows == Windows);

    /// <summary>
    /// Gives a cache file these properties: owner (only a privileged service may; by name where this host knows it), mode,
    /// ACL, attributes, and the time last. What could not be applied is returned, one line each, for the drive's events;
    /// nothing here fails the caller (a stub without an attribute still stands for its bytes).
    /// </summary>
    public List<string> ApplyTo(SafeFileHandle handle, string localPath)
    {
        var problems = new List<string>();
        if (OperatingSystem.IsWindows() && Windows is not null)
        {
            problems.AddRange(Windows.ApplyTo(localPath));
        }
        if (!OperatingSystem.IsLinux())
        {
            return problems;
        }
        if (Owner is { } owner && Environment.IsPrivilegedProcess)
        {
            var (uid, gid) = owner.OnThisHost();
            if (Native.FChown(handle, uid, gid) != 0)
            {
                problems.Add($"owner {uid}:{gid} (errno {Marshal.GetLastPInvokeError()})");
            }
        }
        if (Native.FChmod(handle, (uint)Mode) != 0)
        {
            problems.Add($"mode {Convert.ToString((int)Mode, 8)} (errno {Marshal.GetLastPInvokeError()})");
        }
        if (Acl is not null)
        {
            var bytes = Acl.ToAttribute();
            if (Native.FSetXAttr(handle, PosixAcl.AttributeName, bytes, (nuint)bytes.Length, 0) != 0)
            {
                problems.Add($"ACL {Acl} (errno {Marshal.GetLastPInvokeError()})");
            }
        }
        foreach (var attribute in Attributes)
        {
            if (Native.FSetXAttr(handle, UserNamespace + attribute.Name, attribute.Value, (nuint)attribute.Value.Length, 0) != 0)
            {
                problems.Add($"attribute user.{attribute.Name} (errno {Marshal.GetLastPInvokeError()})");
            }
        }
        if (!TrySetTime(handle, Modified))
        {
            problems.Add($"time {Modified} (errno {Marshal.GetLastPInvokeError()})");
        }
        return problems;
    }
}

/// <summary>A file's owner and group: the ids, and their names where the host that wrote them knew them.</summary>
public sealed record FileOwner(uint Uid, uint Gid, string? UserName, string? GroupName)
{
    /// <summary>The ids to give a file on this host: a name known here wins over the id it had where it was written.</summary>
    public (uint Uid, uint Gid) OnThisHost() =>
        ((UserName is { } user ? OwnerNames.Shared.UserId(user) : null) ?? Uid, (GroupName is { } group ? OwnerNames.Shared.GroupId(group) : null) ?? Gid);
}

/// <summary>One user.* extended attribute: its name without "user.", and its value's bytes.</summary>
public sealed record FileAttribute(string Name, byte[] Value);
