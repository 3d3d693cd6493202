using System.Runtime.Versioning;
using System.Security.AccessControl;
using System.Security.Principal;
using GeoDrive.Api;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>
/// The service's home holds every drive's secret key: on Windows it gets a protected ACL admitting
/// only SYSTEM, Administrators and the service's own account (%ProgramData% would let every user read).
/// The same principals as the control pipe (<see cref="ControlPipeAccess"/>); the Linux home is 0700.
/// </summary>
[SupportedOSPlatform("windows")]
public static class HomeFolderAcl
{
    public static void Restrict(string home)
    {
        using var me = WindowsIdentity.GetCurrent();
        var security = new DirectorySecurity();
        security.SetAccessRuleProtection(isProtected: true, preserveInheritance: false);
        foreach (var entry in ControlPipeAccess.Entries(me.User?.Value).Where(e => e.Allow))
        {
            security.AddAccessRule(new FileSystemAccessRule(new SecurityIdentifier(entry.Sid), FileSystemRights.FullControl,
                InheritanceFlags.ContainerInherit | InheritanceFlags.ObjectInherit, PropagationFlags.None, AccessControlType.Allow));
        }
        new DirectoryInfo(home).SetAccessControl(security);
    }
}
