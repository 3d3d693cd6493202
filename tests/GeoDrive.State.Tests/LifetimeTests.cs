using GeoDrive.Core.Errors;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

public sealed class LifetimeTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-life");

    public void Dispose() => _dir.Dispose();

    private string DbPath => _dir.Combine(".geodrive", "index.db");

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void Only_the_service_user_can_read_the_index_or_enter_its_folder_whatever_the_umask()
    {
        // A state folder made under umask 000 (or by hand) and an index with a log: each is opened up to its owner only.
        var folder = _dir.Combine(".geodrive");
        Directory.CreateDirectory(folder);
        File.SetUnixFileMode(folder, (UnixFileMode)0b111_111_111);
        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            index.Put(new Core.Model.FileEntry { Path = "hr/salaries 2027.xlsx", Size = 1 });

            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(folder));
            foreach (var file in Directory.GetFiles(folder))
            {
                Assert.True(File.GetUnixFileMode(file) == (UnixFileMode.UserRead | UnixFileMode.UserWrite), $"{file} is {File.GetUnixFileMode(file)}");
            }
            // A real local user: cannot list the folder nor read the index.
            var listed = Unprivileged.Run("ls", folder);
            Assert.NotEqual(0, listed.ExitCode);
            Assert.Contains("Permission denied", listed.Output);
        }
        File.SetUnixFileMode(folder, (UnixFileMode)0b111_101_101);
        var read = Unprivileged.Run("cat", DbPath);
        Assert.NotEqual(0, read.ExitCode);
        Assert.Contains("Permission denied", read.Output);
    }

    [Fact]
    public void A_second_open_in_the_same_process_is_refused_as_in_use_until_the_first_is_disposed()
    {
        var first = LiteDbFileIndex.Open(DbPath);

        var refused = Assert.Throws<GeoDriveException>(() => LiteDbFileIndex.Open(DbPath));
        Assert.Equal(ErrorIds.CachePathInUse, refused.ErrorId);

        first.Dispose();
        using var second = LiteDbFileIndex.Open(DbPath);
        Assert.Equal(0, second.Count());
    }

    [Fact]
    public void The_schema_version_is_recorded_and_a_newer_one_is_refused()
    {
        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            index.Put(Samples.Entry("keep.txt"));
        }

        using (var db = RawDatabase.Open(DbPath))
        {
            var meta = db.GetCollection("meta");
            var schema = meta.FindById("schema");
            Assert.Equal(LiteDbFileIndex.SchemaVersion, schema["version"].AsInt32);
            schema["version"] = LiteDbFileIndex.SchemaVersion + 1;
            meta.Update(schema);
        }

        var refused = Assert.Throws<GeoDriveException>(() => LiteDbFileIndex.Open(DbPath));
        Assert.Equal(ErrorIds.CachePathInvalid, refused.ErrorId);
        Assert.Contains("newer GeoDrive", refused.Message, StringComparison.Ordinal);

        // The refusal released the lock and left the file alone.
        using (var db = RawDatabase.Open(DbPath))
        {
            Assert.NotNull(db.GetCollection("files").FindById("keep.txt"));
        }
    }

    [Fact]
    public void A_file_that_is_not_an_index_is_refused_as_CachePathInvalid()
    {
        Directory.CreateDirectory(Path.GetDirectoryName(DbPath)!);
        File.WriteAllBytes(DbPath, Enumerable.Repeat((byte)0x5A, 8192 * 2).ToArray());

        var refused = Assert.Throws<GeoDriveException>(() => LiteDbFileIndex.Open(DbPath));
        Assert.Equal(ErrorIds.CachePathInvalid, refused.ErrorId);
    }

    [Fact]
    public void Dispose_checkpoints_so_no_log_file_is_left_and_the_index_is_unusable_afterwards()
    {
        var index = LiteDbFileIndex.Open(DbPath);
        index.Put(Samples.Entry("a"));
        index.Dispose();
        index.Dispose();

        Assert.False(File.Exists(_dir.Combine(".geodrive", "index-log.db")), "the log should be folded into the data file");
        Assert.Throws<ObjectDisposedException>(() => index.Put(Samples.Entry("b")));
        Assert.Throws<ObjectDisposedException>(() => index.Get("a"));
    }
}
