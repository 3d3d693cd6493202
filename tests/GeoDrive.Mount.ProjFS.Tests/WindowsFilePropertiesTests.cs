using System.Runtime.Versioning;
using System.Security.AccessControl;
using System.Security.Principal;
using GeoDrive.Conformance;
using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>
/// A Windows file's attributes and security descriptor, read from one NTFS file and given to another as a stub made on
/// a new host would be (issue 14, item 2). Run on Windows (the windows.yml workflow); elsewhere reported skipped.
/// </summary>
[SupportedOSPlatform("windows")]
[ConformanceRunsOn("windows", "NTFS attributes and security descriptors exist only on Windows; here their metadata form is tested (PropertyMetadataTests)")]
public sealed class WindowsFilePropertiesTests : IDisposable
{
    private readonly TempDirectory _folder = new();

    public void Dispose()
    {
        foreach (var file in Directory.EnumerateFiles(_folder.Path))
        {
            File.SetAttributes(file, FileAttributes.Normal);
        }
        _folder.Dispose();
    }

    [ConformanceFact]
    public void Attributes_and_explicit_access_entries_read_from_one_file_are_given_to_another()
    {
        var source = Path.Combine(_folder.Path, "source.txt");
        var target = Path.Combine(_folder.Path, "target.txt");
        File.WriteAllText(source, "bytes");
        File.WriteAllText(target, "");
        var users = new SecurityIdentifier(WellKnownSidType.BuiltinUsersSid, null);
        var security = new FileInfo(source).GetAccessControl();
        security.AddAccessRule(new FileSystemAccessRule(users, FileSystemRights.ReadAndExecute, AccessControlType.Deny));
        new FileInfo(source).SetAccessControl(security);
        File.SetAttributes(source, FileAttributes.ReadOnly | FileAttributes.Hidden | FileAttributes.Archive);

        var read = WindowsFileProperties.Read(source);
        Assert.Equal(FileAttributes.ReadOnly | FileAttributes.Hidden | FileAttributes.Archive, read.Attributes);
        Assert.Contains("(D;", read.Sddl, StringComparison.Ordinal);
        Assert.Empty(read.ApplyTo(target));

        Assert.Equal(read, WindowsFileProperties.Read(target));
        Assert.Contains(new FileInfo(target).GetAccessControl().GetAccessRules(true, false, typeof(SecurityIdentifier)).Cast<FileSystemAccessRule>(),
            r => r.IdentityReference == users && r.AccessControlType == AccessControlType.Deny);
    }
}
