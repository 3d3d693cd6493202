using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Bucket sync on its own, on a real bucket, index and cache folder, with no engine around it: when a folder
/// is asked again, which keys never come back as files, and what a listing is never taken to mean. The drive's
/// whole behaviour with another site is BucketSyncTests' and TwoSiteTests'.
/// </summary>
public sealed class BucketSyncUnitTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private DriveRig _rig = null!;
    private CountingLists _store = null!;
    private RenamedKeys _renamed = null!;
    private readonly List<(DriveEventKind Kind, string? Path, string Message, string? ErrorId)> _events = [];
    private readonly List<string> _replaced = [];

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3, DriveRig.DefaultPolicy.Replace("settle: 30s", "settle: 30s, updateWait: 1m"));
        _store = new CountingLists(_rig.Store);
        _renamed = new RenamedKeys(_rig.Index.Get, path => path);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private BucketSync Sync() => new(
        new DriveEngineOptions { Name = "sync", CachePath = _rig.CachePath }, _store, _rig.Index, new FileLife(_rig.Index), new PathLocks(), _renamed,
        new OwedBucketChanges(_rig.Index, _rig.Clock, TimeSpan.FromMinutes(5)), () => _rig.Policy, _rig.Clock, () => "sync-tests-site",
        _ => false, _ => false, _replaced.Add, (kind, path, message, errorId) => _events.Add((kind, path, message, errorId)), NullLogger.Instance);

    private Task PutAsync(string key, string text) =>
        _rig.Store.PutAsync(key, new MemoryStream(System.Text.Encoding.UTF8.GetBytes(text)), text.Length, new Dictionary<string, string>());

    [Fact]
    public async Task A_folder_is_listed_once_within_updateWait_and_again_after_it_with_the_new_object_as_a_stub()
    {
        var sync = Sync();
        await PutAsync("docs/a.txt", "first");

        // The root's listing makes the folder, the folder's listing the stub.
        await sync.BeforeEnumerateAsync("");
        await sync.BeforeEnumerateAsync("docs");
        await PutAsync("docs/b.txt", "second");
        await sync.BeforeEnumerateAsync("docs");

        Assert.Equal(FileState.Stubbed, _rig.Index.Get("docs/a.txt")?.State);
        Assert.Null(_rig.Index.Get("docs/b.txt"));
        Assert.Equal(2, _store.Lists);
        Assert.Equal(5, new FileInfo(_rig.Local("docs/a.txt")).Length);

        _rig.Clock.Advance(TimeSpan.FromSeconds(61));
        await sync.BeforeEnumerateAsync("docs");

        Assert.Equal(3, _store.Lists);
        Assert.Equal(FileState.Stubbed, _rig.Index.Get("docs/b.txt")?.State);
        Assert.NotNull(StubMark.Read(_rig.Local("docs/b.txt")));
        Assert.Equal(6, new FileInfo(_rig.Local("docs/b.txt")).Length);
    }

    [Fact]
    public async Task A_key_a_local_rename_left_behind_or_one_a_renamed_stub_still_holds_never_comes_back_as_a_file()
    {
        var sync = Sync();
        await PutAsync("left.txt", "renamed away, its copy pending");
        await PutAsync("held.txt", "a renamed stub's only copy");
        await PutAsync("new.txt", "someone else's");
        _renamed.Left("left.txt", null);
        _rig.Index.Put(new FileEntry { Path = "moved.txt", State = FileState.Stubbed, ObjectKey = "held.txt" });
        _renamed.Track(_rig.Index.Get("moved.txt")!);

        Assert.False(await sync.LookupMissingAsync("left.txt"));
        await sync.BeforeEnumerateAsync("");

        Assert.False(File.Exists(_rig.Local("left.txt")));
        Assert.False(File.Exists(_rig.Local("held.txt")));
        Assert.Null(_rig.Index.Get("left.txt"));
        Assert.Null(_rig.Index.Get("held.txt"));
        Assert.Equal(FileState.Stubbed, _rig.Index.Get("new.txt")?.State);
    }

    [Fact]
    public async Task A_listing_that_shows_nothing_where_ten_verified_files_should_be_keeps_them_and_says_so()
    {
        var sync = Sync();
        for (var i = 0; i < 10; i++)
        {
            var path = $"f{i}.txt";
            await File.WriteAllTextAsync(_rig.Local(path), "kept");
            _rig.Index.Put(new FileEntry { Path = path, State = FileState.Cached, Size = 4, ObjectKey = path });
        }

        // The bucket is empty: a wrong bucket, prefix or permission looks the same as ten deletes.
        await sync.BeforeEnumerateAsync("");

        Assert.All(Enumerable.Range(0, 10), i => Assert.Equal(FileState.Cached, _rig.Index.Get($"f{i}.txt")?.State));
        Assert.All(Enumerable.Range(0, 10), i => Assert.True(File.Exists(_rig.Local($"f{i}.txt"))));
        Assert.Empty(_replaced);
        Assert.Contains(_events, e => e.ErrorId == ErrorIds.ObjectNotFound && e.Message.Contains("10 unchanged files") && e.Message.Contains("they are kept"));
    }

    /// <summary>The real store, its listings counted.</summary>
    private sealed class CountingLists(IObjectStore inner) : ForwardingStore(inner)
    {
        private int _lists;

        public int Lists => Volatile.Read(ref _lists);

        public override IAsyncEnumerable<ObjectInfo> ListAsync(string prefix, bool recursive = true, CancellationToken cancellationToken = default)
        {
            Interlocked.Increment(ref _lists);
            return base.ListAsync(prefix, recursive, cancellationToken);
        }
    }
}
