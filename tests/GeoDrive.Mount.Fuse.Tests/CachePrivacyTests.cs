using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// The cache behind a mount is the service's alone (0700, whatever the umask or whoever made it): local users
/// reach the drive only through the mount, so none can plant a file or swap a folder for a link in the cache.
/// The drive's root shows the mount folder's own mode, owner and times. With the real user <c>nobody</c>.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class CachePrivacyTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const UnixFileMode Everyone = (UnixFileMode)0b111_111_111;
    private const UnixFileMode OwnerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;

    /// <summary>A drive whose cache and mount folders are open to everyone, as made under umask 000.</summary>
    private (DriveRig Rig, FuseMountedDrive Mounted) MountOpenFolders()
    {
        var rig = Cleanup.Push(new DriveRig(s3));
        File.SetUnixFileMode(rig.CachePath, Everyone);
        File.SetUnixFileMode(MountFolder, Everyone);
        var mounted = Mount(rig.Engine);
        return (rig, mounted);
    }

    [Fact]
    public void A_cache_made_open_to_everyone_is_private_once_mounted_and_nobody_can_plant_a_file_that_shows_in_the_drive()
    {
        var (rig, mounted) = MountOpenFolders();

        var planted = Unprivileged.Run("sh", "-c", $"echo EVIL > '{rig.Local("evil.txt")}'");

        Assert.NotEqual(0, planted.ExitCode);
        Assert.False(File.Exists(Path.Combine(mounted.Root, "evil.txt")));
        Assert.Equal(OwnerOnly, File.GetUnixFileMode(rig.CachePath));
    }

    [Fact]
    public void A_folder_nobody_made_through_the_mount_cannot_be_swapped_for_a_link_in_the_cache()
    {
        var (rig, mounted) = MountOpenFolders();
        var made = Unprivileged.Run("mkdir", Path.Combine(mounted.Root, "mine"));
        Assert.True(made.ExitCode == 0, made.Output);

        var swapped = Unprivileged.Run("sh", "-c", $"mv '{rig.Local("mine")}' '{rig.Local("moved")}' && ln -s /root '{rig.Local("mine")}'");

        Assert.NotEqual(0, swapped.ExitCode);
        Assert.True(Directory.Exists(rig.Local("mine")));
        Assert.False(new DirectoryInfo(rig.Local("mine")).Attributes.HasFlag(FileAttributes.ReparsePoint));
    }

    [Fact]
    public void The_drive_root_shows_the_mount_folders_mode_so_users_still_write_through_the_mount()
    {
        var (_, mounted) = MountOpenFolders();

        var written = Unprivileged.Run("sh", "-c", $"echo mine > '{Path.Combine(mounted.Root, "mine.txt")}' && cat '{Path.Combine(mounted.Root, "mine.txt")}'");

        Assert.True(written.ExitCode == 0, written.Output);
        Assert.Equal("mine\n", written.Output);
        Assert.Equal(Everyone, File.GetUnixFileMode(mounted.Root));
    }

    [Fact]
    public void A_chmod_of_the_drive_root_changes_what_the_root_shows_and_leaves_the_cache_private()
    {
        var (rig, mounted) = MountOpenFolders();

        File.SetUnixFileMode(mounted.Root, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupExecute);

        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupExecute,
            File.GetUnixFileMode(mounted.Root));
        Assert.Equal(OwnerOnly, File.GetUnixFileMode(rig.CachePath));
        var listed = Unprivileged.Run("ls", mounted.Root);
        Assert.NotEqual(0, listed.ExitCode);
    }
}
