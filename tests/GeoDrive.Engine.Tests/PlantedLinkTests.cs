using GeoDrive.Core.Errors;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// A real local user (nobody) who owns a folder in the cache (as one made through the mount does) swaps a
/// sub-folder for a link to a folder of her choice: the engine, running as root, never writes through it —
/// neither a stub from a folder sync nor a recall's bytes — and says so in an event.
/// </summary>
[System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
public sealed class PlantedLinkTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private readonly TempDirectory _outside = new("outside");
    private DriveRig _rig = null!;

    public Task InitializeAsync()
    {
        _rig = new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: planted-links }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 0s, updateWait: 0s }
            """);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _rig.DisposeAsync();
        _outside.Dispose();
    }

    /// <summary>A folder in the cache that belongs to nobody, as a folder she made through the mount would.</summary>
    private string FolderOfNobody(string name)
    {
        var folder = _rig.Local(name);
        Directory.CreateDirectory(folder);
        var (code, output) = Unprivileged.RunAsService("chown", "nobody:nogroup", folder);
        Assert.True(code == 0, output);
        File.SetUnixFileMode(_outside.Path, (UnixFileMode)0b111_111_111);
        return folder;
    }


    [Fact]
    public async Task A_folder_sync_makes_no_stub_through_a_planted_link()
    {
        var mine = FolderOfNobody("mine");
        var planted = Unprivileged.Run("ln", "-s", _outside.Path, Path.Combine(mine, "docs"));
        Assert.True(planted.ExitCode == 0, planted.Output);
        await _rig.S3.Client.PutObjectAsync(new Amazon.S3.Model.PutObjectRequest { BucketName = _rig.Bucket, Key = "mine/docs/report.txt", ContentBody = "from the bucket" });

        await _rig.Engine.BeforeEnumerateAsync("mine/docs", _rig.Caller);

        Assert.Empty(Directory.EnumerateFileSystemEntries(_outside.Path));
        Assert.Contains(_rig.Engine.ReadEvents(), e => e.ErrorId == ErrorIds.PlantedLink);
    }

    [Fact]
    public async Task A_recall_writes_no_byte_through_a_folder_swapped_for_a_link()
    {
        var mine = FolderOfNobody("mine");
        Directory.CreateDirectory(Path.Combine(mine, "docs"));
        await _rig.WriteAsync("mine/docs/a.txt", "the real bytes"u8.ToArray());
        await _rig.Engine.TickAsync();
        await _rig.Engine.WhenUploadsIdleAsync();
        await _rig.Engine.StubAsync("mine/docs/a.txt");
        // She moves the real folder away and puts a link to her own file of that name in its place.
        await File.WriteAllTextAsync(Path.Combine(_outside.Path, "a.txt"), "hers");
        Assert.Equal(0, Unprivileged.Run("mv", Path.Combine(mine, "docs"), Path.Combine(mine, "docs.old")).Item1);
        Assert.Equal(0, Unprivileged.Run("ln", "-s", _outside.Path, Path.Combine(mine, "docs")).Item1);

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => _rig.Engine.RecallAsync("mine/docs/a.txt"));

        Assert.Equal(ErrorIds.PlantedLink, refused.ErrorId);
        Assert.Equal("hers", await File.ReadAllTextAsync(Path.Combine(_outside.Path, "a.txt")));
    }

    [Fact]
    public async Task Uploads_send_no_byte_of_a_file_outside_the_cache_while_a_cache_folder_and_a_link_are_swapped()
    {
        // 100 Dirty files in docs; beside docs, docs.link points to a folder whose files of the same names and
        // sizes are not the drive's. A thread swaps the two names as fast as it can while the engine uploads:
        // a check of the path before the open loses that race, an open beneath the cache never does.
        var files = Enumerable.Range(0, 100).Select(i => $"docs/f{i:D3}.txt").ToList();
        foreach (var path in files)
        {
            await _rig.WriteAsync(path, System.Text.Encoding.UTF8.GetBytes($"the drive's {path}"));
            await File.WriteAllTextAsync(Path.Combine(_outside.Path, Path.GetFileName(path)), $"NOT THE DRIVE {path}");
        }
        File.CreateSymbolicLink(_rig.Local("docs.link"), _outside.Path);

        using (var swapper = new NameSwapper(_rig.Local("docs"), _rig.Local("docs.link")))
        {
            foreach (var path in files)
            {
                try
                {
                    await _rig.Engine.UploadAsync(path);
                }
                catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.PlantedLink)
                {
                }
                catch (IOException)
                {
                    // The file was not where the link check saw it (the swap moved it on).
                }
            }
        }

        foreach (var path in files)
        {
            var stored = await _rig.ObjectBytesAsync(path);
            Assert.False(stored is not null && System.Text.Encoding.UTF8.GetString(stored).StartsWith("NOT THE DRIVE", StringComparison.Ordinal),
                $"{path} went up with the bytes of the file outside the cache");
        }
        // Once nothing races, every file goes up with its own bytes.
        await _rig.Engine.TickAsync();
        await _rig.Engine.WhenUploadsIdleAsync();
        foreach (var path in files)
        {
            await _rig.Engine.UploadAsync(path);
            Assert.Equal($"the drive's {path}", System.Text.Encoding.UTF8.GetString(await _rig.ObjectBytesAsync(path) ?? []));
        }
    }
}
