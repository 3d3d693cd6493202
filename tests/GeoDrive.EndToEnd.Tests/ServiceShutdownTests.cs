using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>What stopping the service leaves behind: no mount, whatever state a drive is in.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class ServiceShutdownTests(S3ServerFixture s3) : ServiceTests
{
    private static bool IsMounted(string path) =>
        File.ReadAllLines("/proc/mounts").Any(line => line.Split(' ')[1] == path);

    [Fact]
    public async Task Stopping_the_service_dismounts_every_drive_even_one_whose_cache_folder_was_deleted_under_it()
    {
        using var broken = new DriveScenario(s3, DriveScenario.Policy(settle: "1h"));
        using var healthy = new DriveScenario(s3, DriveScenario.Policy(settle: "1h"));
        foreach (var d in new[] { broken, healthy })
        {
            Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
            Assert.Empty(Ps.LastErrors);
            await File.WriteAllTextAsync(d.Mounted("note.txt"), d.Name);
            Assert.True(IsMounted(d.MountPath), $"{d.MountPath} is not mounted");
        }

        // An administrator (or a cleanup job) removes a drive's cache folder while the service runs.
        Directory.Delete(broken.CachePath, recursive: true);
        await Service.StopAsync();

        Assert.False(IsMounted(broken.MountPath), $"the service stopped and left {broken.MountPath} mounted");
        Assert.False(IsMounted(healthy.MountPath), $"the service stopped and left {healthy.MountPath} mounted");
        Assert.Equal(healthy.Name, await File.ReadAllTextAsync(healthy.Cached("note.txt")));
    }
}
