using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>The site id a drive stamps on its objects (geodrive-site) is one, and the one its state folder keeps.</summary>
public sealed class SiteIdTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    /// <summary>
    /// A new drive's first uploads ask for the id at once. Before, two of them could each make one: objects went up with
    /// one while the drive went on with the other, and its own objects looked another site's (randomized crash runs).
    /// </summary>
    [Fact]
    public async Task A_new_drive_asked_for_its_site_id_by_many_threads_at_once_has_one_and_keeps_it()
    {
        await using var rig = new DriveRig(s3);
        const int threads = 8;
        var ids = new string[threads];
        using var start = new Barrier(threads);
        var askers = Enumerable.Range(0, threads).Select(i => new Thread(() =>
        {
            start.SignalAndWait();
            ids[i] = rig.Engine.SiteId;
        })).ToList();
        askers.ForEach(t => t.Start());
        askers.ForEach(t => t.Join());

        Assert.Single(ids.Distinct());
        Assert.Equal(ids[0], File.ReadAllText(Path.Combine(rig.Engine.Options.InternalPath, "site-id")));
        await rig.RestartAsync();
        Assert.Equal(ids[0], rig.Engine.SiteId);
    }
}
