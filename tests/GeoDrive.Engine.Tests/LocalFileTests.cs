using GeoDrive.Engine.Files;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// <see cref="LocalFile.Read"/> sees what .NET's FileInfo saw (size, time to the tick, every mode bit; nothing for a
/// folder or a missing name) on real files, links and a FIFO made with the system's tools, while reading a regular file
/// with one system call.
/// </summary>
public sealed class LocalFileTests : IDisposable
{
    private readonly TempDirectory _temp = new("localfile");

    private static LocalFile? AsFileInfoReadsIt(string path)
    {
        var info = new FileInfo(path);
        return info.Exists ? new LocalFile(info.Length, new DateTimeOffset(info.LastWriteTimeUtc, TimeSpan.Zero), info.UnixFileMode) : null;
    }

    [Fact]
    public void A_regular_file_reads_with_its_size_its_time_to_the_tick_and_every_mode_bit()
    {
        var file = _temp.Combine("scan.pdf");
        File.WriteAllBytes(file, new byte[12_345]);
        Command.Output("touch", "-m", "-d", "2025-06-01 12:00:00.123456789 +0000", file);
        Command.Output("chmod", "4751", file);

        var read = LocalFile.Read(file);

        Assert.Equal(new LocalFile(12_345, new DateTimeOffset(2025, 6, 1, 12, 0, 0, TimeSpan.Zero).AddTicks(1_234_567),
            UnixFileMode.SetUser | UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute
            | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute), read);
        Assert.Equal(AsFileInfoReadsIt(file), read);
    }

    [Fact]
    public void A_folder_a_missing_name_and_a_name_under_a_file_read_as_nothing()
    {
        var file = _temp.Combine("notes.txt");
        File.WriteAllText(file, "notes");
        var folder = _temp.CreateSubdirectory("reports");

        Assert.Null(LocalFile.Read(folder));
        Assert.Null(LocalFile.Read(_temp.Combine("gone.txt")));
        Assert.Null(LocalFile.Read(Path.Combine(file, "inside")));
        Assert.Null(LocalFile.Read(_temp.Combine("missing-folder/gone.txt")));
    }

    [Fact]
    public void Links_and_a_fifo_read_as_FileInfo_reads_them()
    {
        var target = _temp.Combine("target.bin");
        File.WriteAllBytes(target, new byte[777]);
        var link = _temp.Combine("link.bin");
        File.CreateSymbolicLink(link, target);
        var dangling = _temp.Combine("dangling.bin");
        File.CreateSymbolicLink(dangling, _temp.Combine("nowhere.bin"));
        var toFolder = _temp.Combine("to-folder");
        File.CreateSymbolicLink(toFolder, _temp.CreateSubdirectory("a-folder"));
        var fifo = _temp.Combine("pipe");
        Command.Output("mkfifo", fifo);

        Assert.Equal(AsFileInfoReadsIt(link), LocalFile.Read(link));
        Assert.Equal(AsFileInfoReadsIt(dangling), LocalFile.Read(dangling));
        Assert.Equal(AsFileInfoReadsIt(toFolder), LocalFile.Read(toFolder));
        Assert.Equal(AsFileInfoReadsIt(fifo), LocalFile.Read(fifo));
    }

    public void Dispose() => _temp.Dispose();
}
