namespace GeoDrive.Mount.ProjFS.Tests;

public sealed class RootLayoutTests
{
    [Fact]
    public void The_instance_id_lives_in_the_state_folder_when_the_drive_has_one_outside_the_root()
    {
        var root = Path.Combine("D:", "GeoDrive", "finance");
        var state = Path.Combine("C:", "ProgramData", "GeoDrive", "drives", "finance");

        Assert.Equal(Path.Combine(state, "projfs-instance-id"), RootLayout.InstanceIdFile(root, state));
        Assert.Equal(Path.Combine(root, ".geodrive", "projfs-instance-id"), RootLayout.InstanceIdFile(root, null));
    }

    [Theory]
    [InlineData(FileAttributes.Directory, FileAttributes.Directory | FileAttributes.Hidden | FileAttributes.System)]
    [InlineData(FileAttributes.Directory | FileAttributes.Hidden, FileAttributes.Directory | FileAttributes.Hidden | FileAttributes.System)]
    [InlineData(FileAttributes.Normal, FileAttributes.Hidden | FileAttributes.System)]
    [InlineData(FileAttributes.Directory | FileAttributes.Hidden | FileAttributes.System | FileAttributes.Archive, FileAttributes.Directory | FileAttributes.Hidden | FileAttributes.System | FileAttributes.Archive)]
    public void A_state_folder_inside_the_root_is_marked_hidden_and_system_keeping_its_other_attributes(FileAttributes current, FileAttributes expected) =>
        Assert.Equal(expected, RootLayout.HiddenAttributes(current));

    [Fact]
    public void The_folder_name_is_the_engines() =>
        Assert.Equal(GeoDrive.Engine.Drives.DriveEngineOptions.InternalFolder, RootLayout.InternalFolder);
}
