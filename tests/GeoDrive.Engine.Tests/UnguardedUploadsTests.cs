using Amazon.S3;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// An administrator is told, once, when nothing keeps this drive's uploads from replacing a version another site wrote: the
/// server does not refuse conditional writes and the bucket keeps no versions. Against Ceph RGW: it refuses them in a bucket
/// without versions and ignores If-None-Match in one that keeps them, both real. No server here ignores them in a bucket
/// without versions, so that case is a stand-in store over the real one, answering the probe as such a server would.
/// </summary>
public sealed class UnguardedUploadsTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: unguarded-uploads }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 0s }
        """;

    [Fact]
    public async Task A_server_that_ignores_conditional_writes_on_a_bucket_without_versions_is_named_once_with_the_remedy_stand_in_for_the_server()
    {
        await using var rig = new DriveRig(ceph, Policy, storeInFront: store => new IgnoresConditions(store));

        await UploadAsync(rig, "a.txt", "first");
        await UploadAsync(rig, "b.txt", "second");

        var warning = Assert.Single(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.ErrorId == ErrorIds.UploadsUnguarded);
        Assert.Contains("keeps no versions", warning.Message);
        Assert.Contains("PutBucketVersioning", warning.Message);
        Assert.Null(warning.Path);
        // Told, not refused: the files still went up.
        Assert.Equal("second"u8.ToArray(), await rig.ObjectBytesAsync("b.txt"));
    }

    [Fact]
    public async Task A_Ceph_bucket_that_keeps_versions_is_not_named_though_the_server_ignores_If_None_Match_there()
    {
        await using var rig = new DriveRig(ceph, Policy);
        await ceph.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
        {
            BucketName = rig.Bucket,
            VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
        });

        await UploadAsync(rig, "a.txt", "first");

        Assert.False(await rig.Store.RefusesConditionalWritesAsync(".geodrive/write-probe")); // Ceph RGW 16 in a bucket that keeps versions
        Assert.DoesNotContain(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.ErrorId == ErrorIds.UploadsUnguarded);
    }

    [Fact]
    public async Task A_Ceph_bucket_without_versions_is_not_named_the_server_refuses_writes_over_another_version()
    {
        await using var rig = new DriveRig(ceph, Policy);

        await UploadAsync(rig, "a.txt", "first");

        Assert.True(await rig.Store.RefusesConditionalWritesAsync(".geodrive/write-probe"));
        Assert.DoesNotContain(rig.Engine.ReadEvents(kind: DriveEventKind.Error), e => e.ErrorId == ErrorIds.UploadsUnguarded);
    }

    private static async Task UploadAsync(DriveRig rig, string path, string content)
    {
        await rig.WriteAsync(path, System.Text.Encoding.UTF8.GetBytes(content));
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.Equal(FileState.Cached, rig.StateOf(path));
    }

    /// <summary>The real store, answering the write probe as a server that writes over a taken key under If-None-Match: * would.</summary>
    private sealed class IgnoresConditions(IObjectStore inner) : ForwardingStore(inner)
    {
        public override Task<bool?> RefusesConditionalWritesAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult<bool?>(false);

        public override Task<bool> RefusesPutsOverTakenKeysAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult(false);

        public override Task<bool> RefusesPutsOverOtherVersionsAsync(string probeKey, CancellationToken cancellationToken = default) => Task.FromResult(false);
    }
}
