using System.Runtime.Versioning;
using System.Security.AccessControl;
using System.Security.Principal;

namespace GeoDrive.Engine.Files;

/// <summary>
/// What a file on Windows has beyond its bytes and time (docs/decisions/0025-windows-file-properties.md): the attributes an
/// administrator sets (read-only, hidden, system, archive, not content indexed) and its security descriptor as SDDL,
/// owner, group and the explicit entries of its DACL. Inherited entries do not travel: a file takes them from the folder it
/// is made in, on whichever host. Read and applied only on Windows; the text forms are platform-neutral (and tested here).
/// </summary>
public sealed record WindowsFileProperties(FileAttributes Attributes, string? Sddl)
{
    /// <summary>The attributes that travel. Others (offline, sparse, reparse point, compressed) describe how the cache stores the file.</summary>
    public const FileAttributes Kept = FileAttributes.ReadOnly | FileAttributes.Hidden | FileAttributes.System | FileAttributes.Archive
        | FileAttributes.NotContentIndexed;

    /// <summary>The kept attributes as text, "ReadOnly,Hidden" ("" for none), as their names read in PowerShell.</summary>
    public string AttributesText => string.Join(',', Enum.GetValues<FileAttributes>().Where(a => a != 0 && (Kept & a) == a && (Attributes & a) == a));

    /// <summary>Attributes from their text; names that are not kept attributes (a damaged or hostile object) are left out.</summary>
    public static FileAttributes ParseAttributes(string? text)
    {
        var attributes = (FileAttributes)0;
        foreach (var name in (text ?? "").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (Enum.TryParse<FileAttributes>(name, ignoreCase: false, out var one) && (Kept & one) == one && !int.TryParse(name, out _))
            {
                attributes |= one;
            }
        }
        return attributes;
    }

    /// <summary>
    /// Whether SDDL from the bucket is used: owner, group and DACL sections only ("O:", "G:", "D:"), printable ASCII, short.
    /// A SACL ("S:") would need a privilege the service does not take, and anything else is not SDDL this drive wrote.
    /// </summary>
    public static bool IsUsableSddl(string? sddl) =>
        sddl is { Length: > 0 and <= 1536 } && sddl.All(c => c is >= ' ' and <= '~') && !sddl.Contains("S:", StringComparison.Ordinal)
        && (sddl.StartsWith("O:", StringComparison.Ordinal) || sddl.StartsWith("G:", StringComparison.Ordinal) || sddl.StartsWith("D:", StringComparison.Ordinal));

    /// <summary>A cache file's kept attributes and security descriptor (owner, group, explicit DACL entries, its protection).</summary>
    [SupportedOSPlatform("windows")]
    public static WindowsFileProperties Read(string localPath)
    {
        var file = new FileInfo(localPath);
        string? sddl;
        try
        {
            var current = file.GetAccessControl(AccessControlSections.Owner | AccessControlSections.Group | AccessControlSections.Access);
            var explicitOnly = new FileSecurity();
            if (current.GetOwner(typeof(SecurityIdentifier)) is { } owner)
            {
                explicitOnly.SetOwner(owner);
            }
            if (current.GetGroup(typeof(SecurityIdentifier)) is { } group)
            {
                explicitOnly.SetGroup(group);
            }
            explicitOnly.SetAccessRuleProtection(current.AreAccessRulesProtected, preserveInheritance: false);
            foreach (FileSystemAccessRule rule in current.GetAccessRules(includeExplicit: true, includeInherited: false, typeof(SecurityIdentifier)))
            {
                explicitOnly.AddAccessRule(rule);
            }
            sddl = explicitOnly.GetSecurityDescriptorSddlForm(AccessControlSections.Owner | AccessControlSections.Group | AccessControlSections.Access);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or InvalidOperationException or IOException)
        {
            sddl = null;
        }
        return new WindowsFileProperties(file.Attributes & Kept, sddl);
    }

    /// <summary>
    /// Gives a cache file these properties: the security descriptor (the owner only where the service may set it; else the
    /// DACL alone, and the owner is named as not applied), then the attributes. Returns what could not be applied.
    /// </summary>
    [SupportedOSPlatform("windows")]
    public List<string> ApplyTo(string localPath)
    {
        var problems = new List<string>();
        var file = new FileInfo(localPath);
        if (IsUsableSddl(Sddl))
        {
            var security = new FileSecurity();
            security.SetSecurityDescriptorSddlForm(Sddl!);
            try
            {
                file.SetAccessControl(security);
            }
            catch (Exception ex) when (ex is UnauthorizedAccessException or InvalidOperationException or PrivilegeNotHeldException)
            {
                // Giving a file another owner takes SeRestorePrivilege: the access entries alone, then.
                var access = new FileSecurity();
                access.SetSecurityDescriptorSddlForm(Sddl!, AccessControlSections.Access);
                try
                {
                    file.SetAccessControl(access);
                    problems.Add($"owner and group of the security descriptor ({ex.Message})");
                }
                catch (Exception inner) when (inner is UnauthorizedAccessException or InvalidOperationException or PrivilegeNotHeldException)
                {
                    problems.Add($"security descriptor ({inner.Message})");
                }
            }
        }
        try
        {
            // The file's own attributes beyond the kept ones (a placeholder's offline, sparse) stay as they are.
            file.Attributes = (file.Attributes & ~Kept) | (Attributes & Kept);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or IOException)
        {
            problems.Add($"attributes {AttributesText} ({ex.Message})");
        }
        return problems;
    }
}
