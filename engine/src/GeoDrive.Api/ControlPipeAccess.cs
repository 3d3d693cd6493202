using System.Globalization;
using System.Text;

namespace GeoDrive.Api;

/// <summary>One access control entry of the control pipe: who, which rights (a PipeAccessRights mask), allow or deny.</summary>
public sealed record PipeAccessEntry(string Sid, uint Rights, bool Allow);

/// <summary>
/// Who may use the control API's named pipe on Windows, as plain data so it is tested on every OS:
/// the service builds the pipe's PipeSecurity from <see cref="Entries"/>, and the client refuses a
/// pipe whose owner is not one of <see cref="TrustedOwners"/> (someone else may have created a pipe of
/// that name first to catch the credentials New-CloudDrive sends). The Linux socket is root-only for
/// the same reason.
/// </summary>
public static class ControlPipeAccess
{
    /// <summary>NT AUTHORITY\SYSTEM: LocalSystem, the account the service is installed with.</summary>
    public const string SystemSid = "S-1-5-18";

    /// <summary>BUILTIN\Administrators: an elevated administrator (and the owner of what an elevated process creates).</summary>
    public const string AdministratorsSid = "S-1-5-32-544";

    /// <summary>NT AUTHORITY\NETWORK: any logon from another machine; the control API is local only.</summary>
    public const string NetworkSid = "S-1-5-2";

    /// <summary>PipeAccessRights.FullControl.</summary>
    public const uint FullControl = 0x001F019F;

    /// <summary>
    /// The pipe's DACL (protected, nothing inherited): remote logons denied; SYSTEM and Administrators
    /// allowed everything; and the service's own account when it is neither, because creating each
    /// further instance of the pipe needs that right too. Nobody else has an entry, so nobody else connects.
    /// </summary>
    public static IReadOnlyList<PipeAccessEntry> Entries(string? serviceAccountSid = null)
    {
        List<PipeAccessEntry> entries =
        [
            new(NetworkSid, FullControl, Allow: false),
            new(SystemSid, FullControl, Allow: true),
            new(AdministratorsSid, FullControl, Allow: true),
        ];
        if (serviceAccountSid is { Length: > 0 } own && own != SystemSid && own != AdministratorsSid)
        {
            entries.Add(new(own, FullControl, Allow: true));
        }
        return entries;
    }

    /// <summary>The same DACL in SDDL, for docs/windows.md and for an administrator comparing with what the pipe has.</summary>
    public static string Sddl(IEnumerable<PipeAccessEntry> entries)
    {
        var sddl = new StringBuilder("D:P");
        foreach (var e in entries)
        {
            sddl.Append(CultureInfo.InvariantCulture, $"({(e.Allow ? "A" : "D")};;0x{e.Rights:x};;;{Alias(e.Sid)})");
        }
        return sddl.ToString();
    }

    /// <summary>Owners a client accepts for the pipe it connects to: SYSTEM, Administrators, or the client's own account.</summary>
    public static IReadOnlyList<string> TrustedOwners(string? clientSid) =>
        clientSid is { Length: > 0 } ? [SystemSid, AdministratorsSid, clientSid] : [SystemSid, AdministratorsSid];

    public static bool IsTrustedOwner(string? ownerSid, string? clientSid) =>
        ownerSid is { Length: > 0 } && TrustedOwners(clientSid).Contains(ownerSid, StringComparer.OrdinalIgnoreCase);

    private static string Alias(string sid) => sid switch
    {
        SystemSid => "SY",
        AdministratorsSid => "BA",
        NetworkSid => "NU",
        _ => sid,
    };
}
