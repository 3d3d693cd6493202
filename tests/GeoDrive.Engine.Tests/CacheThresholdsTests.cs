using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// The cache thresholds on their own: which files a pass stubs and when it stops, against a volume whose usage
/// falls by each stubbed file's size (the drive's own stubbing and its real volume are StubbingPolicyTests' and
/// FullDiskTests').
/// </summary>
public sealed class CacheThresholdsTests
{
    private const long MiB = 1L << 20;
    private readonly DateTimeOffset _now = new(2026, 11, 26, 12, 0, 0, TimeSpan.Zero);
    private readonly List<FileEntry> _files = [];
    private readonly HashSet<string> _open = new(StringComparer.Ordinal);
    private readonly List<string> _stubbed = [];
    private readonly HashSet<string> _failing = new(StringComparer.Ordinal);
    private readonly List<(DriveEventKind Kind, string Message, string? ErrorId)> _events = [];
    private readonly Volume _volume = new(1000 * MiB);

    private CacheThresholds Thresholds(string spec = "cacheThresholds: { stubAbove: 90%, stubUntil: 80% }") => new(
        _volume,
        () => DriveRig.Evaluator($"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: {"{"} name: thresholds {"}"}
            spec:
              {spec}
              stubbing: {"{"} minimumSize: 1MiB, rules: [ {"{"} paths: [ "keep/**" ], pin: true {"}"} ] {"}"}
            """),
        VisitCached,
        e => _open.Contains(e.Path),
        (path, _) =>
        {
            if (_failing.Contains(path))
            {
                throw new GeoDriveException(ErrorIds.StoreError, ErrorKind.InvalidOperation, $"'{path}' could not be verified.", "Try again.");
            }
            var file = _files.Single(f => f.Path == path);
            file.State = FileState.Stubbed;
            _volume.Used -= file.Size;
            _stubbed.Add(path);
            return Task.FromResult(file);
        },
        (kind, _, message, errorId) => _events.Add((kind, message, errorId)));

    private void VisitCached(Action<FileEntry> visit)
    {
        foreach (var file in _files.Where(f => f.State == FileState.Cached))
        {
            visit(file);
        }
    }

    private void Cached(string path, long size, int minutesAgo, bool pinned = false) =>
        _files.Add(new FileEntry { Path = path, State = FileState.Cached, Size = size, LastAccessUtc = _now.AddMinutes(-minutesAgo), Pinned = pinned });

    [Fact]
    public async Task Under_the_threshold_nothing_is_stubbed()
    {
        Cached("a.bin", 100 * MiB, 60);
        _volume.Used = 900 * MiB;

        Assert.Equal(0, await Thresholds().StubAsync(CancellationToken.None));
        Assert.Empty(_stubbed);
    }

    [Fact]
    public async Task Over_the_threshold_the_least_recently_used_files_go_first_until_usage_is_down_to_stubUntil_and_pinned_open_or_small_ones_never()
    {
        Cached("old.bin", 60 * MiB, 600);
        Cached("keep/older.bin", 60 * MiB, 900);
        Cached("pinned.bin", 60 * MiB, 800, pinned: true);
        Cached("open.bin", 60 * MiB, 700);
        Cached("small.bin", MiB / 2, 650);
        Cached("middle.bin", 60 * MiB, 300);
        Cached("recent.bin", 60 * MiB, 5);
        _open.Add("open.bin");
        _volume.Used = 910 * MiB;

        var stubbed = await Thresholds().StubAsync(CancellationToken.None);

        Assert.Equal(2, stubbed);
        Assert.Equal(["old.bin", "middle.bin"], _stubbed);
        Assert.Contains(_events, e => e.Kind == DriveEventKind.Stub && e.Message.Contains("stubbed 2 least recently used files"));
    }

    [Fact]
    public async Task Among_thousands_of_files_exactly_the_oldest_needed_go_and_one_that_fails_is_made_up_by_the_next_oldest()
    {
        // 2,000 files of 1 MiB, accessed a minute apart, listed in no particular order; 950 MiB used, down to 800.
        var order = Enumerable.Range(0, 2_000).OrderBy(i => (i * 7_919) % 2_000).ToList();
        foreach (var i in order)
        {
            Cached($"f{i:0000}.bin", MiB, minutesAgo: 10_000 - i);
        }
        _volume.Used = 950 * MiB;
        _failing.Add("f0003.bin");

        var stubbed = await Thresholds().StubAsync(CancellationToken.None);

        // The 151 least recently used but the one that failed, oldest first.
        Assert.Equal(150, stubbed);
        Assert.Equal(Enumerable.Range(0, 151).Where(i => i != 3).Select(i => $"f{i:0000}.bin"), _stubbed);
        Assert.Equal(800 * MiB, _volume.Used);
        Assert.Single(_events, e => e.Kind == DriveEventKind.Error && e.ErrorId == ErrorIds.StoreError && e.Message.Contains("'f0003.bin'", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_target_that_cannot_be_reached_is_said_once_until_usage_is_under_the_threshold_again()
    {
        Cached("keep/a.bin", 200 * MiB, 600);
        _volume.Used = 950 * MiB;
        var thresholds = Thresholds();

        await thresholds.StubAsync(CancellationToken.None);
        await thresholds.StubAsync(CancellationToken.None);
        Assert.Single(_events, e => e.ErrorId == ErrorIds.CacheThresholdUnreachable);

        _volume.Used = 500 * MiB;
        await thresholds.StubAsync(CancellationToken.None);
        _volume.Used = 950 * MiB;
        await thresholds.StubAsync(CancellationToken.None);
        Assert.Equal(2, _events.Count(e => e.ErrorId == ErrorIds.CacheThresholdUnreachable));
    }

    [Fact]
    public async Task Too_little_free_space_stubs_even_under_stubAbove_and_mirror_mode_never_stubs()
    {
        Cached("a.bin", 100 * MiB, 600);
        _volume.Used = 500 * MiB;
        _volume.HeldBack = 490 * MiB;

        Assert.Equal(1, await Thresholds("cacheThresholds: { stubAbove: 90%, stubUntil: 80%, reserveFree: 50MiB }").StubAsync(CancellationToken.None));

        Cached("b.bin", 100 * MiB, 600);
        _volume.HeldBack = 590 * MiB;
        var mirror = new CacheThresholds(_volume, () => DriveRig.Evaluator("""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: mirror }
            spec:
              stubbing: { enabled: false }
              cacheThresholds: { reserveFree: 50MiB }
            """), VisitCached, e => _open.Contains(e.Path),
            (_, _) => throw new InvalidOperationException("mirror mode stubbed"), (_, _, _, _) => { });
        Assert.Equal(0, await mirror.StubAsync(CancellationToken.None));
    }

    /// <summary>A volume as df shows it: free space is what neither files nor the blocks held back (root's reserve) take.</summary>
    private sealed class Volume(long total) : ICacheVolume
    {
        public long Used { get; set; }

        public long HeldBack { get; set; }

        public VolumeUsage Measure() => new(total, Used, total - Used - HeldBack);
    }
}
