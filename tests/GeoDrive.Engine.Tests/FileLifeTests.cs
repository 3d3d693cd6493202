using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.State;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A file's life as one state machine (docs/architecture.md, "A file's life"), on a real LiteDB index:
/// the transitions that could put zeros or an old version over the only good copy are refused and write
/// nothing, and a decision taken on an old generation is dropped.
/// </summary>
public sealed class FileLifeTests : IDisposable
{
    private readonly TempDirectory _folder = new("life");
    private readonly LiteDbFileIndex _index;
    private readonly FileLife _life;

    public FileLifeTests()
    {
        _index = new LiteDbFileIndex(System.IO.Path.Combine(_folder.Path, "index.db"));
        _life = new FileLife(_index);
    }

    public void Dispose()
    {
        _index.Dispose();
        _folder.Dispose();
    }

    private FileEntry Indexed(string path, FileState state, long generation = 1)
    {
        var entry = new FileEntry { Path = path, State = state, Generation = generation, Size = 10 };
        _index.Put(entry);
        return _index.Get(path)!;
    }

    public static TheoryData<FileState, FileChange> Refused => new()
    {
        // Local bytes not in the bucket are never taken for uploaded, stubbed or overwritten by a recall.
        { FileState.Dirty, FileChange.UploadVerified },
        { FileState.Dirty, FileChange.Stubbed },
        { FileState.Dirty, FileChange.RecallStarted },
        { FileState.Dirty, FileChange.BucketChanged },
        { FileState.Uploading, FileChange.Stubbed },
        { FileState.Uploading, FileChange.RecallStarted },
        { FileState.Uploading, FileChange.BucketChanged },
        { FileState.Excluded, FileChange.UploadStarted },
        { FileState.Excluded, FileChange.Stubbed },
        { FileState.Cached, FileChange.RecallStarted },
        { FileState.Cached, FileChange.Recalled },
        { FileState.Stubbed, FileChange.UploadStarted },
        { FileState.Stubbed, FileChange.Recalled },
        { FileState.Recalling, FileChange.UploadStarted },
        { FileState.Recalling, FileChange.Stubbed },
        { FileState.Cached, FileChange.FoundAsStub },
    };

    [Theory]
    [MemberData(nameof(Refused))]
    public void A_transition_the_life_cycle_does_not_allow_is_refused_with_an_id_and_writes_nothing(FileState from, FileChange change)
    {
        var entry = Indexed("a.bin", from);
        entry.Size = 999;

        var refused = Assert.Throws<GeoDriveException>(() => _life.Apply(entry, change));

        Assert.Equal(ErrorIds.FileBusy, refused.ErrorId);
        Assert.Contains("a.bin", refused.Message);
        Assert.NotNull(refused.Remedy);
        var stored = _index.Get("a.bin")!;
        Assert.Equal(from, stored.State);
        Assert.Equal(10, stored.Size);
    }

    [Fact]
    public void The_life_of_a_file_written_uploaded_stubbed_and_recalled_goes_through()
    {
        var entry = new FileEntry { Path = "life.bin" };
        Assert.True(_life.Apply(entry, FileChange.Written));
        Assert.True(_life.Apply(entry, FileChange.UploadStarted));
        var generation = entry.Generation;
        Assert.True(_life.Apply(entry, FileChange.UploadVerified, decidedOn: generation));
        Assert.True(_life.Apply(entry, FileChange.Stubbed, decidedOn: generation));
        Assert.True(_life.Apply(entry, FileChange.RecallStarted));
        Assert.True(_life.Apply(entry, FileChange.Recalled));

        Assert.Equal(FileState.Cached, _index.Get("life.bin")!.State);
        Assert.Equal(generation, _index.Get("life.bin")!.Generation);
    }

    [Fact]
    public void An_upload_verified_on_an_old_generation_is_dropped_and_the_new_bytes_stay_dirty()
    {
        var entry = new FileEntry { Path = "report.docx" };
        _life.Apply(entry, FileChange.Written);
        _life.Apply(entry, FileChange.UploadStarted);
        var uploadRead = entry.Generation;

        // The application writes again while the bytes it wrote before are on their way.
        var written = _index.Get("report.docx")!;
        _life.Apply(written, FileChange.Written);
        Assert.True(written.Generation > uploadRead);

        var late = _index.Get("report.docx")!;
        late.State = FileState.Uploading;
        Assert.False(_life.Apply(late, FileChange.UploadVerified, decidedOn: uploadRead));
        Assert.Equal(FileState.Dirty, _index.Get("report.docx")!.State);
    }

    [Fact]
    public void Every_change_that_brings_new_bytes_moves_the_generation_on()
    {
        var entry = Indexed("x.bin", FileState.Cached, generation: 5);
        _life.Apply(entry, FileChange.BucketChanged);
        Assert.Equal(6, _index.Get("x.bin")!.Generation);
        _life.Apply(entry, FileChange.Written);
        Assert.Equal(7, _index.Get("x.bin")!.Generation);
        _life.Apply(entry, FileChange.Excluded);
        Assert.Equal(8, _index.Get("x.bin")!.Generation);
    }

    [Fact]
    public void A_save_that_would_write_back_a_state_the_file_has_left_is_refused()
    {
        var stale = Indexed("y.bin", FileState.Cached);
        var now = _index.Get("y.bin")!;
        _life.Apply(now, FileChange.Stubbed);

        stale.LastAccessUtc = DateTimeOffset.UnixEpoch;
        Assert.Throws<GeoDriveException>(() => _life.Save(stale));
        Assert.Equal(FileState.Stubbed, _index.Get("y.bin")!.State);
    }

    [Fact]
    public void Every_change_leads_somewhere_from_at_least_one_state()
    {
        FileState?[] states = [null, .. Enum.GetValues<FileState>().Cast<FileState?>()];
        foreach (var change in Enum.GetValues<FileChange>())
        {
            Assert.Contains(states, s => FileLife.Next(s, change) is not null);
        }
    }

    [Theory]
    [InlineData(FileState.Cached, FileChange.Written, true)]
    [InlineData(FileState.Cached, FileChange.Stubbed, true)]
    [InlineData(FileState.Cached, FileChange.Excluded, true)]
    [InlineData(FileState.Cached, FileChange.BucketChanged, true)]
    [InlineData(FileState.Dirty, FileChange.Written, false)]
    [InlineData(FileState.Stubbed, FileChange.RecallStarted, false)]
    [InlineData(FileState.Recalling, FileChange.Recalled, false)]
    public void A_Cached_file_is_told_before_it_leaves_Cached_and_only_then(FileState from, FileChange change, bool told)
    {
        var heard = new List<(string Path, FileState Then)>();
        var life = new FileLife(_index, path => heard.Add((path, _index.Get(path)!.State)));
        var entry = Indexed("a.bin", from);

        life.Apply(entry, change);

        // Before the write: a recall's flush settles while the index still says Cached (ADR 0031).
        Assert.Equal(told ? [("a.bin", FileState.Cached)] : [], heard);
    }

    [Fact]
    public void A_forgotten_file_is_told_before_its_entry_goes()
    {
        var heard = new List<(string Path, bool Indexed)>();
        var life = new FileLife(_index, path => heard.Add((path, _index.Get(path) is not null)));
        Indexed("gone.bin", FileState.Cached);

        life.Forget("gone.bin");

        Assert.Equal([("gone.bin", true)], heard);
        Assert.Null(_index.Get("gone.bin"));
    }
}
