using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.Engine.Files;
using GeoDrive.State;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Recovery on its own: a real LiteDB index, a real cache folder with marked stubs, the bucket journal, and no
/// bucket at all (it is built without a store), as when a drive starts with its endpoint down. What a restarted
/// drive then does with the bucket is RecoveryTests' and StubMarkTests'.
/// </summary>
public sealed class CacheRecoveryTests : IDisposable
{
    private const string Prefix = "site/";
    private readonly TempDirectory _temp = new("recovery");
    private readonly ManualClock _clock = new();
    private readonly List<(DriveEventKind Kind, string? Path, string Message)> _events = [];
    private readonly DriveEngineOptions _options;
    private readonly LiteDbFileIndex _index;
    private readonly FileLife _life;
    private readonly OwedBucketChanges _owed;
    private readonly RenamedKeys _renamed;

    public CacheRecoveryTests()
    {
        _options = new DriveEngineOptions { Name = "recovery", CachePath = _temp.CreateSubdirectory("cache"), Prefix = Prefix };
        Directory.CreateDirectory(_options.InternalPath);
        _index = new LiteDbFileIndex(Path.Combine(_options.InternalPath, "index.db"));
        _life = new FileLife(_index);
        _owed = new OwedBucketChanges(_index, _clock, TimeSpan.FromMinutes(5));
        _renamed = new RenamedKeys(_index.Get, path => Prefix + path);
    }

    public void Dispose()
    {
        _index.Dispose();
        _temp.Dispose();
    }

    private RecoveryReport Recover() => new CacheRecovery(
        _options, _index, _life, _owed, _renamed, () => DriveRig.Evaluator(DriveRig.DefaultPolicy), _clock,
        (entry, local) =>
        {
            entry.Size = local.Size;
            entry.ModifiedUtc = local.ModifiedUtc;
            entry.DirtySinceUtc = _clock.UtcNow;
            return FileChange.Written;
        },
        path => path + ".conflict",
        (kind, path, message, _) => _events.Add((kind, path, message))).Run();

    private string Local(string path) => Path.Combine(_options.CachePath, path);

    private LocalFile Write(string path, byte[] bytes)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Local(path))!);
        File.WriteAllBytes(Local(path), bytes);
        return LocalFile.Read(Local(path))!.Value;
    }

    /// <summary>A stub in the cache as the engine leaves one: sparse, its size and time, marked for <paramref name="key"/>.</summary>
    private FileEntry Stub(string path, long size, string key, bool indexed = true)
    {
        var entry = new FileEntry { Path = path, Size = size, ModifiedUtc = new DateTimeOffset(2026, 3, 1, 8, 0, 0, TimeSpan.Zero), ObjectKey = key, ETag = "etag-of-" + key };
        Directory.CreateDirectory(Path.GetDirectoryName(Local(path))!);
        LocalFile.CreateStub(_options.CachePath, Local(path), size, entry.ModifiedUtc, UnixFileMode.UserRead | UnixFileMode.UserWrite, StubMark.For(entry, key, Prefix + path));
        if (indexed)
        {
            _life.Apply(entry, FileChange.FoundAsStub);
        }
        return entry;
    }

    [Fact]
    public void With_no_bucket_at_all_interrupted_uploads_and_recalls_new_files_and_unknown_stubs_are_each_put_right()
    {
        var uploading = new FileEntry { Path = "up.bin" };
        _life.Apply(uploading, FileChange.Written);
        var local = Write("up.bin", DriveRig.RandomBytes(1000, 1));
        uploading.Size = local.Size;
        uploading.ModifiedUtc = local.ModifiedUtc;
        _life.Apply(uploading, FileChange.UploadStarted);

        var recalling = Stub("docs/rec.bin", 5000, Prefix + "docs/rec.bin");
        _life.Apply(recalling, FileChange.RecallStarted);
        // Part of the object had arrived when the service died.
        using (var partial = new FileStream(Local("docs/rec.bin"), FileMode.Open, FileAccess.Write))
        {
            partial.Write(DriveRig.RandomBytes(100, 2));
        }
        File.SetLastWriteTimeUtc(Local("docs/rec.bin"), recalling.ModifiedUtc.UtcDateTime);

        Write("notes/new.txt", "written while the service was down"u8.ToArray());
        // A stub the index never heard of (the index was moved aside): its own mark says so.
        Stub("old/unknown.bin", 7000, Prefix + "old/unknown.bin", indexed: false);

        var report = Recover();

        Assert.Equal((1, 2, 1, 0), (report.UploadsResumed, report.StubsRepaired, report.NewFound, report.Forgotten));
        Assert.Equal(FileState.Dirty, _index.Get("up.bin")!.State);
        Assert.Equal(FileState.Dirty, _index.Get("notes/new.txt")!.State);
        Assert.Equal(FileState.Stubbed, _index.Get("docs/rec.bin")!.State);
        // The partial bytes are gone: the stub is all zeros again, marked, at its size.
        Assert.All(File.ReadAllBytes(Local("docs/rec.bin")), b => Assert.Equal(0, b));
        Assert.NotNull(StubMark.Read(Local("docs/rec.bin")));
        var unknown = _index.Get("old/unknown.bin")!;
        Assert.Equal((FileState.Stubbed, 7000L, Prefix + "old/unknown.bin"), (unknown.State, unknown.Size, unknown.ObjectKey));
        Assert.Equal(0, _owed.Count);
    }

    [Fact]
    public void A_stub_moved_on_disk_from_a_name_the_index_lost_stands_for_that_names_object_holds_its_key_and_is_owed_its_copy()
    {
        // The crash came between the rename on disk and the rename in the index.
        Stub("a.bin", 4096, Prefix + "a.bin");
        Directory.CreateDirectory(Local("moved"));
        File.Move(Local("a.bin"), Local("moved/b.bin"));

        var report = Recover();

        Assert.Null(_index.Get("a.bin"));
        var moved = _index.Get("moved/b.bin")!;
        Assert.Equal((FileState.Stubbed, Prefix + "a.bin", "etag-of-" + Prefix + "a.bin"), (moved.State, moved.ObjectKey, moved.ETag));
        Assert.True(_owed.IsCopyOwedTo(Prefix + "moved/b.bin"));
        Assert.True(_owed.IsCopySource(Prefix + "a.bin"));
        Assert.Equal("moved/b.bin", _renamed.HolderOf(Prefix + "a.bin"));
        Assert.True(_renamed.WasLeft(Prefix + "a.bin"));
        Assert.Equal((1, 1), (report.Forgotten, report.StubsRepaired));
    }

    [Fact]
    public void Bytes_written_into_a_stub_while_the_service_was_down_are_kept_under_a_conflict_name_and_the_name_is_a_stub_again()
    {
        Stub("report.doc", 3000, Prefix + "report.doc");
        var written = DriveRig.RandomBytes(3000, 3);
        File.WriteAllBytes(Local("report.doc"), written);

        var report = Recover();

        Assert.Equal(1, report.ChangedFound);
        Assert.Equal(written, File.ReadAllBytes(Local("report.doc.conflict")));
        Assert.Null(StubMark.Read(Local("report.doc.conflict")));
        Assert.Equal(FileState.Dirty, _index.Get("report.doc.conflict")!.State);
        Assert.Equal(FileState.Stubbed, _index.Get("report.doc")!.State);
        Assert.NotNull(StubMark.Read(Local("report.doc")));
        Assert.All(File.ReadAllBytes(Local("report.doc")), b => Assert.Equal(0, b));
        Assert.Contains(_events, e => e.Kind == DriveEventKind.Conflict && e.Path == "report.doc" && e.Message.Contains("report.doc.conflict"));
    }
}
