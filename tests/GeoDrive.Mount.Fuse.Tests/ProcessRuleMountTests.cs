using System.Diagnostics;
using Amazon.S3.Model;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// processExcludes and folder sync through a real mount: programs are told apart by their image name
/// (/proc/PID/comm), so the tests run copies of ls and cat under the names the policy mentions.
/// Objects are put into the bucket with the raw S3 client, as another tool would. Downloads are counted
/// by a wrapper around the real store (<see cref="RequestCountingStore"/>), which changes nothing it passes on.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class ProcessRuleMountTests : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private const string Policy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: process-rules }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s, updateWait: 5m }
          processExcludes:
            - { process: "scanner", folderSync: skip }
            - { process: "avscan", recall: deny }
            - { process: "backup*", recall: stream }
        """;

    private readonly DriveRig _rig;
    private RequestCountingStore _store = null!;
    private readonly TempDirectory _mountFolder = new("mnt");
    private readonly TempDirectory _programs = new("bin");
    private FuseMountedDrive _mounted = null!;

    public ProcessRuleMountTests(S3ServerFixture s3)
    {
        _rig = new DriveRig(s3, Policy, storeInFront: real => _store = new RequestCountingStore(real));
    }

    public Task InitializeAsync()
    {
        _mounted = new FuseMountedDrive(_rig.Engine, _mountFolder.Path);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _mounted.DisposeAsync();
        await _rig.DisposeAsync();
        _mountFolder.Dispose();
        _programs.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted.Root, path);

    /// <summary>A copy of a system program under another name, so that the engine sees that name as the caller.</summary>
    private string Program(string name, string source)
    {
        var path = _programs.Combine(name);
        if (!File.Exists(path))
        {
            File.Copy(source, path);
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        return path;
    }

    private static (int ExitCode, byte[] Output, string Errors) Run(string file, params string[] arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true })!;
        var errors = process.StandardError.ReadToEndAsync();
        using var output = new MemoryStream();
        process.StandardOutput.BaseStream.CopyTo(output);
        process.WaitForExit();
        return (process.ExitCode, output.ToArray(), errors.Result);
    }

    private static string[] Names(byte[] lsOutput) =>
        System.Text.Encoding.UTF8.GetString(lsOutput).Split('\n', StringSplitOptions.RemoveEmptyEntries);

    private Task PutRawAsync(string key, string content) =>
        _rig.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = _rig.Bucket, Key = key, ContentBody = content });

    private async Task<byte[]> StubThroughMountAsync(string path, int size)
    {
        var content = DriveRig.RandomBytes(size, seed: size);
        await File.WriteAllBytesAsync(Mounted(path), content);
        await _mounted.WaitForClosesAsync();
        _rig.Clock.Advance(TimeSpan.FromHours(1));
        await _rig.Engine.TickAsync();
        Assert.Equal(FileState.Stubbed, (await _rig.Engine.StubAsync(path)).State);
        Assert.Equal(0, _rig.AllocatedBlocks(path));
        return content;
    }

    [Fact]
    public async Task A_scanner_listing_a_folder_triggers_no_folder_sync_while_ls_brings_the_new_object_as_a_stub()
    {
        await PutRawAsync("report.txt", "quarterly figures\n");

        var scanner = Run(Program("scanner", "/bin/ls"), "-1", _mounted.Root);

        Assert.Equal(0, scanner.ExitCode);
        Assert.DoesNotContain("report.txt", Names(scanner.Output));
        Assert.False(File.Exists(_rig.Local("report.txt")));

        var ls = Run("ls", "-1", _mounted.Root);

        Assert.Equal(0, ls.ExitCode);
        Assert.Contains("report.txt", Names(ls.Output));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("report.txt"));
        Assert.Equal(0, _rig.AllocatedBlocks("report.txt"));
        Assert.Equal("quarterly figures\n".Length, new FileInfo(Mounted("report.txt")).Length);
        var cat = Run("cat", Mounted("report.txt"));
        Assert.Equal("quarterly figures\n", System.Text.Encoding.UTF8.GetString(cat.Output));
        Assert.Equal(FileState.Cached, _rig.StateOf("report.txt"));
    }

    [Fact]
    public async Task A_second_listing_within_updateWait_does_not_ask_the_bucket_and_one_after_it_does()
    {
        Assert.Equal(0, Run("ls", "-1", _mounted.Root).ExitCode);
        await PutRawAsync("later.txt", "late");

        var within = Run("ls", "-1", _mounted.Root);
        _rig.Clock.Advance(TimeSpan.FromMinutes(4));
        var stillWithin = Run("ls", "-1", _mounted.Root);
        _rig.Clock.Advance(TimeSpan.FromMinutes(1));
        var after = Run("ls", "-1", _mounted.Root);

        Assert.DoesNotContain("later.txt", Names(within.Output));
        Assert.DoesNotContain("later.txt", Names(stillWithin.Output));
        Assert.Contains("later.txt", Names(after.Output));
        Assert.Equal("late", System.Text.Encoding.UTF8.GetString(Run("cat", Mounted("later.txt")).Output));
    }

    [Fact]
    public async Task Reading_a_stub_with_recall_deny_fails_with_a_permission_error_and_downloads_nothing()
    {
        await StubThroughMountAsync("scan-me.bin", 200_000);

        var avscan = Run(Program("avscan", "/bin/cat"), Mounted("scan-me.bin"));
        await _mounted.WaitForClosesAsync();

        Assert.Equal(0, _store.Gets("scan-me.bin"));
        Assert.NotEqual(0, avscan.ExitCode);
        Assert.Contains("Permission denied", avscan.Errors, StringComparison.Ordinal);
        Assert.Empty(avscan.Output);
        Assert.Empty(_rig.Engine.ReadEvents(kind: DriveEventKind.Recall));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("scan-me.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("scan-me.bin"));
    }

    [Fact]
    public async Task Reading_a_stub_with_recall_stream_returns_its_bytes_and_it_stays_a_stub()
    {
        var content = await StubThroughMountAsync("archive.bin", 300_000);

        var backup = Run(Program("backup-agent", "/bin/cat"), Mounted("archive.bin"));
        await _mounted.WaitForClosesAsync();

        Assert.Equal(0, backup.ExitCode);
        Assert.Equal(content, backup.Output);
        // Its bytes came from the bucket, read in ranges and given to the reader, not kept.
        Assert.True(_store.Gets("archive.bin") > 0, "the streamed read downloaded nothing");
        Assert.Empty(_rig.Engine.ReadEvents(kind: DriveEventKind.Recall));
        Assert.Equal(FileState.Stubbed, _rig.StateOf("archive.bin"));
        Assert.Equal(0, _rig.AllocatedBlocks("archive.bin"));
        // Anyone else still hydrates it.
        Assert.Equal(content, Run("cat", Mounted("archive.bin")).Output);
        Assert.Equal(FileState.Cached, _rig.StateOf("archive.bin"));
    }

    [Fact]
    public async Task Hostile_keys_in_the_bucket_never_create_anything_outside_the_cache()
    {
        string[] hostile = ["../escape.txt", "a/../../x", "a/../../../escape2.txt", ".geodrive/index.db"];
        foreach (var key in hostile)
        {
            await PutRawAsync(key, "hostile");
        }
        await PutRawAsync("a/ok.txt", "fine");
        var stored = await _rig.S3.Client.ListObjectsV2Async(new ListObjectsV2Request { BucketName = _rig.Bucket });
        // The keys really are in the bucket as written (no client or server tidied them up).
        Assert.Subset(stored.S3Objects.Select(o => o.Key).ToHashSet(), hostile.ToHashSet());
        var outside = Path.GetDirectoryName(_rig.CachePath)!;
        var before = Directory.EnumerateFileSystemEntries(outside).Order().ToList();

        var root = Run("ls", "-1a", _mounted.Root);
        var folder = Run("ls", "-1a", Mounted("a"));
        var missing = Run("cat", Mounted("escape.txt"));

        Assert.Equal((0, 0), (root.ExitCode, folder.ExitCode));
        Assert.Equal(["a"], Names(root.Output).Except([".", ".."]));
        Assert.Equal(["ok.txt"], Names(folder.Output).Except([".", ".."]));
        Assert.NotEqual(0, missing.ExitCode);
        Assert.Equal(before, Directory.EnumerateFileSystemEntries(outside).Order().ToList());
        Assert.False(File.Exists(Path.Combine(outside, "escape.txt")) || File.Exists(Path.Combine(outside, "x")));
        Assert.False(File.Exists(Path.Combine(Path.GetDirectoryName(outside)!, "escape2.txt")));
        Assert.True(new FileInfo(Path.Combine(_rig.CachePath, ".geodrive", "index.db")).Length > "hostile".Length);
        var refused = _rig.Engine.ReadEvents(kind: DriveEventKind.Error).Where(e => e.ErrorId == ErrorIds.HostileObjectKey).ToList();
        Assert.Contains(refused, e => e.Message.Contains("'../'", StringComparison.Ordinal));
        Assert.Contains(refused, e => e.Message.Contains("'a/../'", StringComparison.Ordinal));
        Assert.Contains(refused, e => e.Message.Contains("'.geodrive/'", StringComparison.Ordinal));
    }
}
