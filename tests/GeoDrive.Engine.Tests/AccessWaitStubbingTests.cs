using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Stubbing by access wait on its own, on a manual clock: which files are due, and that the scan of every Cached
/// file runs only when one can be due (the drive's own stubbing is StubAndRecallTests' and StubbingPolicyTests').
/// </summary>
public sealed class AccessWaitStubbingTests
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: access-waits }
        spec:
          stubbing:
            accessWait: 1h
            minimumSize: 1KiB
            rules: [ { paths: [ "keep/**" ], pin: true }, { paths: [ "hot/**" ], accessWait: 10m } ]
        """;

    private readonly ManualClock _clock = new(new DateTimeOffset(2026, 11, 26, 12, 0, 0, TimeSpan.Zero));
    private readonly List<FileEntry> _files = [];
    private readonly HashSet<string> _open = new(StringComparer.Ordinal);
    private readonly List<string> _stubbed = [];
    private int _scans;

    private AccessWaitStubbing Stubbing() => new(
        () => DriveRig.Evaluator(Policy),
        visit =>
        {
            _scans++;
            _files.Where(f => f.State == FileState.Cached).ToList().ForEach(visit);
        },
        e => _open.Contains(e.Path),
        (path, _) =>
        {
            var file = _files.Single(f => f.Path == path);
            file.State = FileState.Stubbed;
            _stubbed.Add(path);
            return Task.FromResult(file);
        },
        (_, _, _, _) => { },
        _clock,
        batchSize: 100);

    private FileEntry Cached(string path, int minutesAgo, long size = 4096, bool pinned = false)
    {
        var entry = new FileEntry { Path = path, State = FileState.Cached, Size = size, LastAccessUtc = _clock.UtcNow.AddMinutes(-minutesAgo), Pinned = pinned };
        _files.Add(entry);
        return entry;
    }

    [Fact]
    public async Task Files_past_their_access_wait_are_stubbed_and_pinned_open_or_small_ones_never()
    {
        Cached("old.bin", 61);
        Cached("young.bin", 30);
        Cached("hot/a.bin", 11);
        Cached("keep/old.bin", 600);
        Cached("pinned.bin", 600, pinned: true);
        Cached("open.bin", 600);
        Cached("small.bin", 600, size: 100);
        _open.Add("open.bin");

        Assert.Equal(2, await Stubbing().StubDueAsync(CancellationToken.None));
        Assert.Equal(["old.bin", "hot/a.bin"], _stubbed);
    }

    [Fact]
    public async Task The_scan_runs_again_only_when_a_file_can_be_due_or_ten_minutes_passed()
    {
        Cached("a.bin", 30);
        var stubbing = Stubbing();
        await stubbing.StubDueAsync(CancellationToken.None);
        Assert.Equal(1, _scans);

        // Nothing can be due for 30 minutes (the access wait is an hour), but the scan looks again after 10.
        _clock.Advance(TimeSpan.FromMinutes(9));
        await stubbing.StubDueAsync(CancellationToken.None);
        Assert.Equal(1, _scans);
        _clock.Advance(TimeSpan.FromSeconds(61));
        await stubbing.StubDueAsync(CancellationToken.None);
        Assert.Equal(2, _scans);
        Assert.Empty(_stubbed);

        // A file that became Cached and is due sooner brings the scan forward.
        _clock.Advance(TimeSpan.FromSeconds(5));
        stubbing.NeededFor(Cached("b.bin", 61));
        await stubbing.StubDueAsync(CancellationToken.None);
        Assert.Equal(3, _scans);
        Assert.Equal(["b.bin"], _stubbed);

        _clock.Advance(TimeSpan.FromMinutes(20));
        await stubbing.StubDueAsync(CancellationToken.None);
        Assert.Equal(["b.bin", "a.bin"], _stubbed);
    }
}
