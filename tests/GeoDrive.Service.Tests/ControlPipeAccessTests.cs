using System.IO.Pipes;
using GeoDrive.Api;

namespace GeoDrive.Service.Tests;

public sealed class ControlPipeAccessTests
{
    [Fact]
    public void The_pipe_admits_SYSTEM_and_Administrators_and_denies_network_logons()
    {
        var entries = ControlPipeAccess.Entries(ControlPipeAccess.SystemSid);

        Assert.Equal(
            [
                new PipeAccessEntry("S-1-5-2", ControlPipeAccess.FullControl, Allow: false),
                new PipeAccessEntry("S-1-5-18", ControlPipeAccess.FullControl, Allow: true),
                new PipeAccessEntry("S-1-5-32-544", ControlPipeAccess.FullControl, Allow: true),
            ],
            entries);
        // Deny first: Windows reads an ACL in order, and a remote administrator must not get in through "Allow Administrators".
        Assert.False(entries[0].Allow);
    }

    [Fact]
    public void A_service_account_other_than_SYSTEM_is_added_so_it_can_create_further_instances()
    {
        const string account = "S-1-5-80-1234-5678";
        var entries = ControlPipeAccess.Entries(account);

        Assert.Equal(4, entries.Count);
        Assert.Equal(new PipeAccessEntry(account, ControlPipeAccess.FullControl, Allow: true), entries[^1]);
        Assert.Equal(3, ControlPipeAccess.Entries(ControlPipeAccess.AdministratorsSid).Count);
        Assert.Equal(3, ControlPipeAccess.Entries(null).Count);
    }

    [Fact]
    public void The_ACL_in_SDDL_is_protected_and_names_nobody_else()
    {
        Assert.Equal("D:P(D;;0x1f019f;;;NU)(A;;0x1f019f;;;SY)(A;;0x1f019f;;;BA)", ControlPipeAccess.Sddl(ControlPipeAccess.Entries(ControlPipeAccess.SystemSid)));
        Assert.EndsWith("(A;;0x1f019f;;;S-1-5-21-1-2-3-1001)", ControlPipeAccess.Sddl(ControlPipeAccess.Entries("S-1-5-21-1-2-3-1001")), StringComparison.Ordinal);
        Assert.DoesNotContain(";;;WD)", ControlPipeAccess.Sddl(ControlPipeAccess.Entries()), StringComparison.Ordinal); // Everyone
        Assert.DoesNotContain(";;;BU)", ControlPipeAccess.Sddl(ControlPipeAccess.Entries()), StringComparison.Ordinal); // Users
    }

    [Fact]
    public void Full_control_is_the_pipes_own_right_mask()
    {
        Assert.Equal((uint)PipeAccessRights.FullControl, ControlPipeAccess.FullControl);
    }

    [Theory]
    [InlineData("S-1-5-18", "S-1-5-21-9-1001", true)]
    [InlineData("S-1-5-32-544", "S-1-5-21-9-1001", true)]
    [InlineData("S-1-5-21-9-1001", "S-1-5-21-9-1001", true)]
    [InlineData("S-1-5-21-9-1002", "S-1-5-21-9-1001", false)]
    [InlineData("S-1-1-0", null, false)]
    [InlineData(null, "S-1-5-21-9-1001", false)]
    [InlineData("", "S-1-5-21-9-1001", false)]
    public void A_client_trusts_a_pipe_owned_by_SYSTEM_Administrators_or_itself(string? owner, string? client, bool trusted) =>
        Assert.Equal(trusted, ControlPipeAccess.IsTrustedOwner(owner, client));
}
