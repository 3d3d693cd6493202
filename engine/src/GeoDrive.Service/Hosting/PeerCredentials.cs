using System.Net.Sockets;
using GeoDrive.Core.Errors;
using Microsoft.AspNetCore.Connections.Features;

namespace GeoDrive.Service.Hosting;

/// <summary>
/// Who is at the other end of the control socket (SO_PEERCRED: the kernel's word, not the client's), and whether
/// that caller may use the service: root, the service's own user, or a member of the administrators group named
/// by --admin-group. Checked on every request, whatever the socket file's mode (docs/decisions/0009-control-socket-access.md).
/// </summary>
public static class PeerCredentials
{
    private const int SolSocket = 1;
    private const int SoPeerCred = 17;

    /// <summary>The caller of a connection on a Unix socket: (process id, user id, group id); null when the transport has none.</summary>
    public static (int Pid, uint Uid, uint Gid)? Of(Socket socket)
    {
        if (socket.AddressFamily != AddressFamily.Unix)
        {
            return null;
        }
        Span<byte> ucred = stackalloc byte[12];
        var length = socket.GetRawSocketOption(SolSocket, SoPeerCred, ucred);
        if (length < 12)
        {
            return null;
        }
        return (BitConverter.ToInt32(ucred[..4]), BitConverter.ToUInt32(ucred[4..8]), BitConverter.ToUInt32(ucred[8..12]));
    }

    /// <summary>Refuses every request whose caller is not allowed, before it reaches a route (Linux, Unix socket only).</summary>
    public static void Use(WebApplication app, ServiceOptions options)
    {
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        var ownUid = OwnUid();
        app.Use(async (context, next) =>
        {
            if (context.Features.Get<IConnectionSocketFeature>()?.Socket is { } socket && Of(socket) is { } peer
                && !Allowed(peer, ownUid, options.AdminGroup))
            {
                throw new GeoDriveException(ErrorIds.ServiceAccessDenied, ErrorKind.PermissionDenied,
                    $"User id {peer.Uid} may not use the GeoDrive service: only root{(options.AdminGroup is null ? "" : $" and members of the group '{options.AdminGroup}'")} may.",
                    options.AdminGroup is null
                        ? "Run PowerShell as root (sudo pwsh), or start the service with --admin-group <group> and add the user to that group."
                        : $"Run PowerShell as root (sudo pwsh), or add the user to the group '{options.AdminGroup}' and log in again.");
            }
            await next(context);
        });
    }

    private static bool Allowed((int Pid, uint Uid, uint Gid) peer, uint ownUid, string? adminGroup)
    {
        if (peer.Uid == 0 || peer.Uid == ownUid)
        {
            return true;
        }
        if (adminGroup is null || GroupId(adminGroup) is not { } admins)
        {
            return false;
        }
        return peer.Gid == admins || SupplementaryGroups(peer.Pid).Contains(admins);
    }

    /// <summary>The service's own user id (its files and socket belong to it).</summary>
    private static uint OwnUid() =>
        File.ReadLines("/proc/self/status").FirstOrDefault(l => l.StartsWith("Uid:", StringComparison.Ordinal)) is { } line
            ? uint.Parse(line.Split('\t', StringSplitOptions.RemoveEmptyEntries)[1], System.Globalization.CultureInfo.InvariantCulture)
            : 0;

    /// <summary>A group's id from /etc/group; null when there is no such group.</summary>
    private static uint? GroupId(string name)
    {
        foreach (var line in File.ReadLines("/etc/group"))
        {
            var fields = line.Split(':');
            if (fields.Length >= 3 && fields[0] == name && uint.TryParse(fields[2], out var gid))
            {
                return gid;
            }
        }
        return null;
    }

    /// <summary>The supplementary groups of a process, from /proc (empty when it is gone).</summary>
    private static IReadOnlySet<uint> SupplementaryGroups(int pid)
    {
        try
        {
            var line = File.ReadLines($"/proc/{pid}/status").FirstOrDefault(l => l.StartsWith("Groups:", StringComparison.Ordinal));
            return line is null
                ? new HashSet<uint>()
                : line["Groups:".Length..].Split([' ', '\t'], StringSplitOptions.RemoveEmptyEntries).Select(uint.Parse).ToHashSet();
        }
        catch (IOException)
        {
            return new HashSet<uint>();
        }
    }
}
