using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Owner and group names come from this host's real user database (the test process is root, as the service is, and
/// makes a group of its own with groupadd), asked again once a name is a minute old.
/// </summary>
public sealed class OwnerNamesTests
{
    [Fact]
    public void A_renamed_group_is_known_by_its_new_name_and_id_once_the_old_ones_are_a_minute_old()
    {
        var suffix = Guid.NewGuid().ToString("N")[..8];
        var (before, after) = ($"gd-before-{suffix}", $"gd-after-{suffix}");
        Assert.Equal(0, Command.Run("groupadd", [before]).ExitCode);
        try
        {
            var gid = uint.Parse(Command.Output("getent", "group", before).Split(':')[2], System.Globalization.CultureInfo.InvariantCulture);
            var clock = new ManualClock();
            var names = new OwnerNames(clock);

            Assert.Equal(before, names.GroupName(gid));
            Assert.Equal(gid, names.GroupId(before));
            Assert.Null(names.GroupId(after));
            Assert.Equal(("root", 0u), (names.UserName(0), names.UserId("root")));
            Assert.Equal(0, Command.Run("groupmod", ["-n", after, before]).ExitCode);

            clock.Advance(OwnerNames.Keep - TimeSpan.FromSeconds(1));
            Assert.Equal((before, gid, null), (names.GroupName(gid), names.GroupId(before), names.GroupId(after)));
            clock.Advance(TimeSpan.FromSeconds(1));
            Assert.Equal((after, null, gid), (names.GroupName(gid), names.GroupId(before), names.GroupId(after)));
            Assert.Equal(after, Owners.GroupName(gid));
        }
        finally
        {
            Command.Run("groupdel", [after]);
            Command.Run("groupdel", [before]);
        }
    }
}
