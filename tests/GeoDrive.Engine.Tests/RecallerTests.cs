using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The recaller on its own: an object in a real bucket, a sparse cache file, and no index (what the file's
/// state becomes is the engine's: StubAndRecallTests, RangedRecallTests). Ranges are small here so that one
/// file of a few hundred KB is many ranged GETs.
/// </summary>
public sealed class RecallerTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const int Range = 64 << 10;
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3);
        return Task.CompletedTask;
    }

    public Task DisposeAsync() => _rig.DisposeAsync().AsTask();

    private Recaller Recaller(IObjectStore store, int threads = 3) =>
        new("recaller", _rig.CachePath, store, () => threads, destination => destination, NullLogger.Instance);

    /// <summary>An object in the bucket and a sparse cache file of <paramref name="recordedSize"/> standing for it.</summary>
    private async Task<(FileEntry Entry, byte[] Bytes)> StubAsync(string path, int size, int seed, long? recordedSize = null, bool withXxh128 = false)
    {
        var bytes = DriveRig.RandomBytes(size, seed);
        var put = await _rig.Store.PutAsync(path, new MemoryStream(bytes), bytes.Length, new Dictionary<string, string>());
        var local = Path.Combine(_rig.CachePath, path);
        await using (var stub = File.Create(local))
        {
            stub.SetLength(recordedSize ?? size);
        }
        var entry = new FileEntry
        {
            Path = path, Size = recordedSize ?? size, ObjectKey = path, ETag = put.ETag,
            Checksum = Convert.ToHexStringLower(SHA256.HashData(bytes)),
            Xxh128 = withXxh128 ? Convert.ToHexStringLower(System.IO.Hashing.XxHash128.Hash(bytes)) : null,
        };
        return (entry, bytes);
    }

    /// <summary>Starts a recall and returns the session the recaller hands to finish, once it does.</summary>
    private static Task<RecallSession> RecallAsync(Recaller recaller, FileEntry entry, out RecallSession started)
    {
        var finished = new TaskCompletionSource<RecallSession>(TaskCreationOptions.RunContinuationsAsynchronously);
        started = recaller.Start(entry, entry.ObjectKey!, Range, session =>
        {
            recaller.Ended(session);
            finished.TrySetResult(session);
            return Task.CompletedTask;
        }, CancellationToken.None);
        return finished.Task;
    }

    [Fact]
    public async Task Every_range_lands_at_its_offset_at_most_restoreThreads_at_a_time_and_the_hash_is_the_whole_files()
    {
        var (entry, bytes) = await StubAsync("big.bin", 10 * Range + 123, 1);
        var store = new CountingGets(_rig.Store);

        var session = await RecallAsync(Recaller(store), entry, out _);

        Assert.True(session.Data.IsCompletedSuccessfully);
        Assert.Equal(11, session.RangeCount);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(_rig.CachePath, "big.bin")));
        Assert.Equal(entry.Checksum, Convert.ToHexStringLower(session.Sha256!));
        Assert.Equal(11, store.Offsets.Count);
        Assert.InRange(store.MostAtOnce, 1, 3);
    }

    [Fact]
    public async Task A_range_cut_off_midway_by_a_store_that_cuts_its_first_answer_is_fetched_again_from_the_byte_where_it_stopped()
    {
        var (entry, bytes) = await StubAsync("cut.bin", 3 * Range, 2);
        var store = new CountingGets(_rig.Store) { CutFirstAfter = 1000 };

        var session = await RecallAsync(Recaller(store, threads: 1), entry, out _);

        Assert.True(session.Data.IsCompletedSuccessfully);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(_rig.CachePath, "cut.bin")));
        // The first range asked twice: from 0, then from the 1,000th byte, never from 0 again.
        Assert.Equal([0L, 1000L, Range, 2L * Range], store.Offsets.Order());
    }

    /// <summary>Issue 13: a file of one range is hashed as its bytes are written, not read back; a retry goes on hashing from where it stopped.</summary>
    [Fact]
    public async Task A_file_of_one_range_cut_off_midway_is_fetched_again_from_where_it_stopped_and_hashed_whole()
    {
        var (entry, bytes) = await StubAsync("one.bin", Range - 7, 4);
        var store = new CountingGets(_rig.Store) { CutFirstAfter = 1000 };

        var session = await RecallAsync(Recaller(store, threads: 1), entry, out _);

        Assert.True(session.Data.IsCompletedSuccessfully);
        Assert.Equal(1, session.RangeCount);
        Assert.Equal([0L, 1000L], store.Offsets.Order());
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(_rig.CachePath, "one.bin")));
        Assert.Equal(entry.Checksum, Convert.ToHexStringLower(session.Sha256!));
    }

    /// <summary>Issue 13: where the entry records an XXH3-128, that is the one hash taken, by either way of hashing.</summary>
    [Theory]
    [InlineData(Range - 7)]
    [InlineData(5 * Range + 11)]
    public async Task A_file_that_records_an_XXH3_128_is_hashed_by_it_alone_whether_of_one_range_or_many(int size)
    {
        var (entry, bytes) = await StubAsync($"fast-{size}.bin", size, 5, withXxh128: true);

        var session = await RecallAsync(Recaller(_rig.Store), entry, out _);

        Assert.True(session.Data.IsCompletedSuccessfully);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(_rig.CachePath, entry.Path)));
        Assert.Equal(entry.Xxh128, Convert.ToHexStringLower(session.Xxh128!));
        Assert.Null(session.Sha256);
        Assert.Null(session.Md5);
    }

    [Fact]
    public async Task An_object_longer_than_the_stub_records_is_refused_as_not_the_stubs_own()
    {
        var (entry, _) = await StubAsync("longer.bin", 1000, 3, recordedSize: 900);

        var session = await RecallAsync(Recaller(_rig.Store), entry, out _);

        var refused = Assert.IsType<GeoDriveException>(session.Failure);
        Assert.Equal(ErrorIds.ObjectMismatch, refused.ErrorId);
        Assert.True(session.Data.IsFaulted);
    }

    [Fact]
    public async Task A_recall_follows_its_files_rename_and_stops_when_the_file_is_deleted()
    {
        var (entry, _) = await StubAsync("moving.bin", 2 * Range, 4);
        var store = new CountingGets(_rig.Store) { Hold = new TaskCompletionSource() };
        var recaller = Recaller(store, threads: 1);

        var finished = RecallAsync(recaller, entry, out var started);
        await store.FirstGet.Task;
        recaller.Move("moving.bin", "moved.bin");

        Assert.False(recaller.IsRecalling("moving.bin"));
        Assert.True(recaller.TryGet("moved.bin", out var moved));
        Assert.Same(started, moved);
        Assert.Equal("moved.bin", moved.Path);

        recaller.Move("moved.bin", null);
        var session = await finished;
        Assert.IsAssignableFrom<OperationCanceledException>(session.Failure);
        Assert.False(recaller.IsRecalling("moved.bin"));
    }

    /// <summary>The real store, its GETs counted (offsets, most at once); optionally the first answer cut, or every GET held.</summary>
    private sealed class CountingGets(IObjectStore inner) : ForwardingStore(inner)
    {
        private int _inFlight;
        private int _cut;

        public List<long> Offsets { get; } = [];
        public int MostAtOnce { get; private set; }
        public int? CutFirstAfter { get; init; }
        public TaskCompletionSource? Hold { get; init; }
        public TaskCompletionSource FirstGet { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public override async Task<ObjectInfo?> GetAsync(string key, Stream destination, long offset, long? length, ObjectVersion expected, CancellationToken cancellationToken = default)
        {
            lock (Offsets)
            {
                Offsets.Add(offset);
                MostAtOnce = Math.Max(MostAtOnce, ++_inFlight);
            }
            try
            {
                FirstGet.TrySetResult();
                if (Hold is not null)
                {
                    await Hold.Task.WaitAsync(cancellationToken);
                }
                if (CutFirstAfter is { } cutAfter && Interlocked.Exchange(ref _cut, 1) == 0)
                {
                    var whole = new MemoryStream();
                    await base.GetAsync(key, whole, offset, length, expected, cancellationToken);
                    await destination.WriteAsync(whole.GetBuffer().AsMemory(0, cutAfter), cancellationToken);
                    throw new IOException("The connection was cut (by the test's store).");
                }
                return await base.GetAsync(key, destination, offset, length, expected, cancellationToken);
            }
            finally
            {
                lock (Offsets)
                {
                    _inFlight--;
                }
            }
        }
    }
}
