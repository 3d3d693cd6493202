using System.Text;
using Amazon.S3.Model;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// An upload never replaces a version it did not compare with: another site that writes the object between
/// the engine's look at the bucket (the conflict check's HEAD) and its PUT makes the PUT fail (If-Match, or
/// If-None-Match: * for a new key), and the engine compares again and keeps both versions. The moment is
/// forced by a store that lets the other site write right after that HEAD (a real PUT to the real bucket);
/// a real race would need luck to land there. Against the test S3 server (moto, or Ceph RGW with GEODRIVE_TEST_S3=ceph).
/// </summary>
public sealed class ConditionalUploadTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;
    private OtherSiteAtAMoment _store = null!;

    private DriveEngine Engine => _rig.Engine;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: conditional-uploads }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 30m, updateWait: 0s }
            """, storeInFront: store => _store = new OtherSiteAtAMoment(store));
        return _rig.Engine.StartAsync();
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private Task PutRawAsync(string key, string content) =>
        _rig.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = _rig.Bucket, Key = key, ContentBody = content });

    /// <summary>
    /// Where the server is known to refuse a PUT over a version it does not name, a changed file's PUT is its own look at
    /// the bucket (If-Match on the version it knew), and the other site writes right before it (issue 13); elsewhere the
    /// comparison's HEAD goes first, and the other site writes right after it.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_version_another_site_writes_between_the_conflict_check_and_the_upload_is_kept_beside_the_local_one_moment_forced_by_a_hooked_store(bool comparesFirst)
    {
        _store.ComparesFirst = comparesFirst;
        await _rig.WriteAsync("mine.txt", "base"u8.ToArray());
        await Engine.UploadAsync("mine.txt");
        await _rig.WriteAsync("mine.txt", "my edit"u8.ToArray());
        Func<Task> theirs = () => PutRawAsync("mine.txt", "their edit");
        if (comparesFirst)
        {
            _store.After("mine.txt", theirs);
        }
        else
        {
            _store.BeforePut("mine.txt", theirs);
        }

        await UploadUntilSettledAsync();

        Assert.Equal("their edit"u8.ToArray(), await _rig.ObjectBytesAsync("mine.txt"));
        var copy = Assert.Single(Engine.FindFiles("mine (conflict *).txt"));
        Assert.Equal("my edit"u8.ToArray(), await _rig.ObjectBytesAsync(copy.Path));
        Assert.Equal("their edit"u8.ToArray(), await _rig.ReadAsync("mine.txt"));
        Assert.Contains(Engine.ReadEvents(kind: DriveEventKind.Conflict), e => e.Path == "mine.txt");
    }

    /// <summary>The version a changed file knew was deleted by another site just before its PUT: the edit goes up as a new object.</summary>
    [Fact]
    public async Task A_changed_file_whose_object_another_site_deleted_just_before_its_upload_goes_up_whole_moment_forced_by_a_hooked_store()
    {
        await _rig.WriteAsync("gone.txt", "base"u8.ToArray());
        await Engine.UploadAsync("gone.txt");
        await _rig.WriteAsync("gone.txt", "my edit"u8.ToArray());
        _store.BeforePut("gone.txt", () => _rig.S3.Client.DeleteObjectAsync(_rig.Bucket, "gone.txt"));

        await UploadUntilSettledAsync();

        Assert.Equal("my edit"u8.ToArray(), await _rig.ObjectBytesAsync("gone.txt"));
        Assert.Equal("my edit"u8.ToArray(), await _rig.ReadAsync("gone.txt"));
        Assert.Empty(Engine.FindFiles("gone (conflict *).txt"));
        Assert.DoesNotContain(Engine.ReadEvents(kind: DriveEventKind.Error), e => e.Path == "gone.txt");
    }

    [Fact]
    public async Task A_new_file_another_site_creates_under_the_same_name_just_before_the_upload_is_kept_beside_the_local_one_moment_forced_by_a_hooked_store()
    {
        await _rig.WriteAsync("new.txt", "mine, new"u8.ToArray());
        _store.BeforePut("new.txt", () => PutRawAsync("new.txt", "theirs, new"));

        await UploadUntilSettledAsync();

        Assert.Equal("theirs, new"u8.ToArray(), await _rig.ObjectBytesAsync("new.txt"));
        var copy = Assert.Single(Engine.FindFiles("new (conflict *).txt"));
        Assert.Equal("mine, new"u8.ToArray(), await _rig.ObjectBytesAsync(copy.Path));
    }

    /// <summary>
    /// Issue 13: a file goes up in one request, new or changed. Its PUT asks for a free key, or for the version the file
    /// knew (the server refuses either over another site's object, above), so no HEAD goes first. On a server not known to
    /// refuse them, the comparison's HEAD still goes first.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_file_goes_up_without_a_look_at_the_bucket_first_new_or_changed_where_the_server_refuses_what_its_PUT_does_not_name(bool serverKnownToRefuse)
    {
        _store.ComparesFirst = !serverKnownToRefuse;
        foreach (var content in new[] { "first", "second", "third" })
        {
            await _rig.WriteAsync("fresh.txt", Encoding.UTF8.GetBytes(content));
            // The write's open asked the bucket (updateWait 0s): only what the upload asks counts.
            _store.ForgetHeads("fresh.txt");
            await UploadUntilSettledAsync();
        }

        Assert.Equal(serverKnownToRefuse ? [false, false, false] : [true, true, true], _store.PutsRightAfterAHead("fresh.txt"));
        Assert.Equal("third"u8.ToArray(), await _rig.ObjectBytesAsync("fresh.txt"));
        Assert.Empty(Engine.FindFiles("fresh (conflict *).txt"));
    }

    [Fact]
    public async Task A_file_held_open_that_meets_another_sites_version_is_not_uploaded_over_it_until_it_can_be_moved_aside()
    {
        await _rig.WriteAsync("open.txt", "base"u8.ToArray());
        await Engine.UploadAsync("open.txt");
        await _rig.WriteAsync("open.txt", "my edit"u8.ToArray());
        await PutRawAsync("open.txt", "their edit");
        await Engine.OpenAsync("open.txt", _rig.Caller, OpenIntent.Read);

        var held = await Engine.UploadAsync("open.txt");

        Assert.Equal(FileState.Dirty, held.State);
        Assert.Equal("their edit"u8.ToArray(), await _rig.ObjectBytesAsync("open.txt"));
        Assert.Equal("my edit", await File.ReadAllTextAsync(_rig.Local("open.txt")));

        await Engine.ClosedAsync("open.txt", _rig.Caller, modified: false);
        await UploadUntilSettledAsync();
        var copy = Assert.Single(Engine.FindFiles("open (conflict *).txt"));
        Assert.Equal("my edit"u8.ToArray(), await _rig.ObjectBytesAsync(copy.Path));
        Assert.Equal("their edit"u8.ToArray(), await _rig.ObjectBytesAsync("open.txt"));
    }

    /// <summary>
    /// Uploads until nothing is Dirty: the refused PUT leaves the file Dirty, and the next try keeps both. The
    /// settle delay (30 minutes) keeps the pipeline from uploading a write before the test has set the scene;
    /// each pass moves the clock past it.
    /// </summary>
    private async Task UploadUntilSettledAsync()
    {
        for (var pass = 0; pass < 5 && Engine.FindFiles("**").Any(f => f.State is not (FileState.Cached or FileState.Stubbed)); pass++)
        {
            _rig.Clock.Advance(TimeSpan.FromHours(1));
            await Engine.TickAsync();
            await Engine.WhenUploadsIdleAsync();
        }
    }

    /// <summary>
    /// The real store; once armed for a key, another site's write runs right after the engine's next HEAD of it, or
    /// right before its next PUT of it. Notes of each PUT whether a HEAD of its key came right before it. With
    /// <see cref="ComparesFirst"/> it answers as a server not known to refuse conditional PUTs would (its probe said no).
    /// </summary>
    private sealed class OtherSiteAtAMoment(IObjectStore inner) : ForwardingStore(inner)
    {
        private readonly Dictionary<string, Func<Task>> _afterHead = new(StringComparer.Ordinal);
        private readonly Dictionary<string, Func<Task>> _beforePut = new(StringComparer.Ordinal);
        private readonly Dictionary<string, bool> _headedLast = new(StringComparer.Ordinal);
        private readonly Dictionary<string, List<bool>> _puts = new(StringComparer.Ordinal);

        public bool ComparesFirst { get; set; }

        public override async Task<bool> RefusesPutsOverTakenKeysAsync(string probeKey, CancellationToken cancellationToken = default) =>
            !ComparesFirst && await base.RefusesPutsOverTakenKeysAsync(probeKey, cancellationToken);

        public override async Task<bool> RefusesPutsOverOtherVersionsAsync(string probeKey, CancellationToken cancellationToken = default) =>
            !ComparesFirst && await base.RefusesPutsOverOtherVersionsAsync(probeKey, cancellationToken);

        public void After(string key, Func<Task> write)
        {
            lock (_afterHead)
            {
                _afterHead[key] = write;
            }
        }

        public void BeforePut(string key, Func<Task> write)
        {
            lock (_afterHead)
            {
                _beforePut[key] = write;
            }
        }

        public void ForgetHeads(string key)
        {
            lock (_afterHead)
            {
                _headedLast.Remove(key);
            }
        }

        public List<bool> PutsRightAfterAHead(string key)
        {
            lock (_afterHead)
            {
                return [.. _puts.GetValueOrDefault(key) ?? []];
            }
        }

        public override async Task<ObjectInfo?> HeadAsync(string key, CancellationToken cancellationToken = default)
        {
            var head = await base.HeadAsync(key, cancellationToken);
            await RunArmedAsync(_afterHead, key, isHead: true);
            return head;
        }

        public override async Task<ObjectInfo> PutAsync(string key, Stream content, long length, IReadOnlyDictionary<string, string> metadata, IMultipartObserver? observer, PutCondition condition, string? contentSha256, CancellationToken cancellationToken = default)
        {
            await RunArmedAsync(_beforePut, key, isHead: false);
            return await base.PutAsync(key, content, length, metadata, observer, condition, contentSha256, cancellationToken);
        }

        private async Task RunArmedAsync(Dictionary<string, Func<Task>> armed, string key, bool isHead)
        {
            Func<Task>? write;
            lock (_afterHead)
            {
                if (!isHead)
                {
                    (_puts.TryGetValue(key, out var puts) ? puts : _puts[key] = []).Add(_headedLast.GetValueOrDefault(key));
                }
                _headedLast[key] = isHead;
                armed.Remove(key, out write);
            }
            if (write is not null)
            {
                await write();
            }
        }
    }
}
