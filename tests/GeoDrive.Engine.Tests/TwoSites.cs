using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>What the two-site tests share: two engines (own cache, index, site id) on one bucket under one policy.</summary>
internal static class TwoSites
{
    /// <summary>Uploads at once and bucket checks at every open, so each step of a test is seen by the other site.</summary>
    public const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: two-sites }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s, updateWait: 0s }
        """;

    /// <summary>A site's ticks and uploads until what it owes the bucket is settled (a copy, then the old key's delete).</summary>
    public static async Task SettleAsync(DriveRig rig)
    {
        for (var i = 0; i < 3; i++)
        {
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();
        }
    }
}
