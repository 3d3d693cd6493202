using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Issue 13: a file that goes up in one PUT is hashed once; the PUT is signed with that SHA-256 and, on a server that
/// checks signed bodies (Ceph RGW here, AWS S3), the server's check replaces the MD5 the engine computed to compare with
/// the ETag. Bytes that are not the ones hashed never replace the object: the server refuses them. The bytes are changed on
/// the way by a stand-in store, a fault no real part here produces (memory or a proxy that changes a body).
/// </summary>
public sealed class SignedUploadTests(CephS3Fixture ceph) : IClassFixture<CephS3Fixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;
    private BytesChangedOnTheWay _store = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(ceph, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: signed-uploads }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 30m, updateWait: 0s }
            """, storeInFront: store => _store = new BytesChangedOnTheWay(store));
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    [Fact]
    public async Task Bytes_that_are_not_the_ones_hashed_never_replace_the_object_the_server_refuses_them_changed_by_a_stand_in_store()
    {
        var first = DriveRig.RandomBytes(300_000, 1);
        var second = DriveRig.RandomBytes(300_000, 2);
        await _rig.WriteAsync("report.pdf", first);
        await _rig.Engine.UploadAsync("report.pdf");
        await _rig.WriteAsync("report.pdf", second);
        _store.Changing = true;

        var failed = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.UploadAsync("report.pdf"));

        Assert.Equal(first, await _rig.ObjectBytesAsync("report.pdf"));
        Assert.Equal(ErrorIds.StoreError, failed.ErrorId);
        Assert.Equal(FileState.Dirty, _rig.Engine.GetFile("report.pdf")!.State);
        Assert.Equal(second, await _rig.ReadAsync("report.pdf"));

        _store.Changing = false;
        var uploaded = await _rig.Engine.UploadAsync("report.pdf");

        Assert.Equal(FileState.Cached, uploaded.State);
        Assert.Equal(second, await _rig.ObjectBytesAsync("report.pdf"));
    }

    [Fact]
    public async Task A_small_file_goes_up_verified_by_the_server_and_its_object_holds_its_bytes()
    {
        var bytes = DriveRig.RandomBytes(10_000, 3);
        await _rig.WriteAsync("scan.tif", bytes);

        var uploaded = await _rig.Engine.UploadAsync("scan.tif");

        Assert.Equal(FileState.Cached, uploaded.State);
        Assert.True(await _rig.Store.VerifiesPayloadChecksumsAsync(".geodrive/write-probe"));
        Assert.NotNull(_store.LastSha256);
        Assert.Equal(bytes, await _rig.ObjectBytesAsync("scan.tif"));
    }

    /// <summary>Sends one byte changed from what the engine hashed, under the engine's hash, while <see cref="Changing"/>.</summary>
    private sealed class BytesChangedOnTheWay(IObjectStore inner) : ForwardingStore(inner)
    {
        public volatile bool Changing;

        public string? LastSha256 { get; private set; }

        public override Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer,
            PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default)
        {
            LastSha256 = contentSha256;
            if (!Changing || key.Contains("/.geodrive/", StringComparison.Ordinal) || key.StartsWith(".geodrive/", StringComparison.Ordinal))
            {
                return base.PutAsync(key, content, length, metadata, observer, condition, contentSha256, cancellationToken);
            }
            var bytes = new byte[length];
            content.ReadExactly(bytes);
            bytes[length / 2] ^= 0xff;
            return base.PutAsync(key, new MemoryStream(bytes, writable: false), length, metadata, observer, condition, contentSha256, cancellationToken);
        }
    }
}
