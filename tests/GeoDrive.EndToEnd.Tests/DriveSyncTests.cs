using System.Globalization;
using System.Management.Automation;
using Amazon.S3.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Sync-CloudDrive and Invoke-CloudRecall -Recurse on a drive created over a bucket that already holds a tree
/// (a drive rebuilt on a new host): through the real service and mount, nothing listed through the mount first.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class DriveSyncTests(S3ServerFixture s3) : ServiceTests
{
    private const int Many = 300;

    /// <summary>Files nested three deep, beside a folder, and many in one folder.</summary>
    private static Dictionary<string, byte[]> Tree(int many)
    {
        var files = new Dictionary<string, byte[]>(StringComparer.Ordinal)
        {
            ["a/b/c/deep.txt"] = "deep in a/b/c"u8.ToArray(),
            ["a/top.txt"] = "top of a"u8.ToArray(),
            ["x/y/z.bin"] = DriveRig.RandomBytes(70_000, 7),
        };
        for (var i = 0; i < many; i++)
        {
            files[string.Create(CultureInfo.InvariantCulture, $"many/f{i:000}.txt")] = System.Text.Encoding.UTF8.GetBytes($"file {i}");
        }
        return files;
    }

    /// <summary>Straight into the bucket, as another host's drive left it; "empty/" is a zero-byte folder marker.</summary>
    private async Task PutAsync(DriveScenario d, Dictionary<string, byte[]> files)
    {
        var keys = files.Select(f => (f.Key, f.Value)).Append(("empty/", []));
        await Parallel.ForEachAsync(keys, new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (file, ct) =>
            await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = d.Bucket, Key = file.Item1, InputStream = new MemoryStream(file.Item2) }, ct));
    }

    private static T Value<T>(PSObject o, string property) => (T)o.Properties[property].Value;

    [Fact]
    public async Task Sync_CloudDrive_makes_every_stub_and_folder_of_the_bucket_with_progress()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        var files = Tree(Many);
        await PutAsync(d, files);
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.False(Directory.Exists(d.Cached("a")), "nothing is listed before the sync");

        var synced = Ps.Invoke("Get-CloudDrive -Name $name | Sync-CloudDrive", d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal("GeoDrive.Api.DriveSyncInfo", synced.TypeNames[0]);
        Assert.Equal(d.Name, Value<string>(synced, "Drive"));
        Assert.False(Value<bool>(synced, "Running"));
        Assert.NotNull(synced.Properties["Ended"].Value);
        // Listed: the root, a, a/b, a/b/c, empty, many, x, x/y. Made: every one of them but the root.
        Assert.Equal(8, Value<int>(synced, "Folders"));
        Assert.Equal(7, Value<int>(synced, "FoldersMade"));
        Assert.Equal(Many + 3L, Value<long>(synced, "StubsMade"));

        // Progress on the pipeline: indeterminate, then completed.
        Assert.NotEmpty(Ps.LastProgress);
        Assert.All(Ps.LastProgress, p => Assert.Equal($"Syncing drive {d.Name} with its bucket", p.Activity));
        Assert.All(Ps.LastProgress, p => Assert.Equal(-1, p.PercentComplete));
        Assert.Equal(ProgressRecordType.Completed, Ps.LastProgress[^1].RecordType);

        // The cache folder itself, not a listing through the mount: a stub of each file, of its size, holding no blocks.
        foreach (var (path, bytes) in files)
        {
            Assert.True(File.Exists(d.Cached(path)), $"{path} is in the cache");
            Assert.Equal(bytes.Length, new FileInfo(d.Cached(path)).Length);
            Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached(path)));
        }
        Assert.True(Directory.Exists(d.Cached("empty")), "the empty folder of the marker is made");
        Assert.Empty(Directory.EnumerateFileSystemEntries(d.Cached("empty")));
        var listed = Ps.Invoke("Get-CloudFile -Drive $name -Path '**'", d.Variables());
        Assert.Equal(files.Keys.Order(StringComparer.Ordinal), listed.Select(f => Value<string>(f, "Path")).Order(StringComparer.Ordinal));
        Assert.All(listed, f => Assert.Equal("Stubbed", Value<string>(f, "State")));

        Assert.Equal(files["a/b/c/deep.txt"], await File.ReadAllBytesAsync(d.Mounted("a/b/c/deep.txt")));
    }

    [Fact]
    public async Task Invoke_CloudRecall_Recurse_recalls_the_files_of_a_folder_never_listed()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        var files = Tree(many: 0);
        files["x/w.txt"] = "beside y"u8.ToArray();
        await PutAsync(d, files);
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.False(Directory.Exists(d.Cached("x")), "nothing is listed before the recall");

        var result = Ps.Invoke("Invoke-CloudRecall -Drive $name -Path x -Recurse", d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(2, Value<int>(result, "Files"));
        Assert.Equal(files["x/y/z.bin"].Length + files["x/w.txt"].Length, Value<long>(result, "Bytes"));
        // The cache files themselves hold the bytes: recalled by the service, not read through the mount.
        Assert.Equal(files["x/y/z.bin"], await File.ReadAllBytesAsync(d.Cached("x/y/z.bin")));
        Assert.Equal(files["x/w.txt"], await File.ReadAllBytesAsync(d.Cached("x/w.txt")));
        // Only x's tree and the folders above it were synced.
        Assert.True(Directory.Exists(d.Cached("a")));
        Assert.False(File.Exists(d.Cached("a/top.txt")));

        // A file's path with -Recurse: the sync says it is no folder, which is no error; the file is recalled.
        result = Ps.Invoke("Invoke-CloudRecall -Drive $name -Path a/top.txt -Recurse", d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(1, Value<int>(result, "Files"));
        Assert.Equal(files["a/top.txt"], await File.ReadAllBytesAsync(d.Cached("a/top.txt")));
    }

    [Fact]
    public async Task Empty_folders_made_through_the_mount_are_in_the_bucket_and_a_drive_rebuilt_over_it_has_them()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Directory.CreateDirectory(d.Mounted("clients/acme/2026/inbox"));
        Directory.CreateDirectory(d.Mounted("clients/old"));
        Directory.Move(d.Mounted("clients/old"), d.Mounted("clients/archive"));
        await DriveScenario.EventuallyAsync(() => d.Bucket_.HeadAsync("clients/acme/2026/inbox/").GetAwaiter().GetResult() is not null
            && d.Bucket_.HeadAsync("clients/archive/").GetAwaiter().GetResult() is not null
            && d.Bucket_.HeadAsync("clients/old/").GetAwaiter().GetResult() is null, "the folders' markers in the bucket", seconds: 30);

        // Another drive over the same bucket, with a cache of its own: a new host.
        using var rebuilt = new DriveScenario(s3, DriveScenario.Policy());
        Ps.Invoke(DriveScenario.NewDriveScript, rebuilt.Variables(bucket: d.Bucket));
        Assert.Empty(Ps.LastErrors);
        Ps.Invoke("Sync-CloudDrive -Drive $name", rebuilt.Variables(bucket: d.Bucket));
        Assert.Empty(Ps.LastErrors);

        Assert.True(Directory.Exists(rebuilt.Mounted("clients/acme/2026/inbox")));
        Assert.True(Directory.Exists(rebuilt.Mounted("clients/archive")));
        Assert.False(Directory.Exists(rebuilt.Mounted("clients/old")));
    }
}
