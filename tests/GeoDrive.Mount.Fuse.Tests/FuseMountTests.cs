using System.Diagnostics;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>What only the Linux front end shows: callers from /proc, the state xattr, names that are not UTF-8.</summary>
public sealed class FuseMountTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private readonly DriveRig _rig = new(s3);
    private readonly TempDirectory _mountFolder = new("mnt");
    private CallerRecorder _recorder = null!;
    private FuseMountedDrive _mounted = null!;

    public Task InitializeAsync()
    {
        _recorder = new CallerRecorder(_rig.Engine);
        _mounted = new FuseMountedDrive(_recorder, _mountFolder.Path);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _mounted.DisposeAsync();
        await _rig.DisposeAsync();
        _mountFolder.Dispose();
    }

    private string Mounted(string path) => Path.Combine(_mounted.Root, path);

    private static (int ExitCode, int Pid, string Output, string Errors) Run(string file, params string[] arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true })!;
        var errors = process.StandardError.ReadToEndAsync();
        var output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, process.Id, output, errors.Result);
    }

    [Fact]
    public async Task A_file_and_a_folder_made_through_the_mount_get_the_permissions_their_maker_asked_for_whatever_the_services_umask()
    {
        // The service here is this process: its umask masks group and others' write, as the unit's UMask=0022 does.
        var umask = LibCUmask(0b000_010_010);
        _ = LibCUmask(umask | 0b000_010_010);
        try
        {
            // The maker asks for 0666 and 0777 under umask 002 (a shared project folder): the kernel makes that 0664 and
            // 0775, and the service must not narrow it again to 0644 and 0755.
            var made = Run("sh", "-c", $"umask 002 && echo x > '{Mounted("shared.txt")}' && mkdir '{Mounted("team")}' && stat -c %a '{Mounted("shared.txt")}' '{Mounted("team")}'");

            Assert.Equal((0, "664\n775\n"), (made.ExitCode, made.Output));
            await _mounted.WaitForClosesAsync();
            await _rig.Engine.UploadAsync("shared.txt");
            Assert.Equal("664", (await _rig.Store.HeadAsync("shared.txt"))!.Metadata[GeoDrive.Engine.Layout.ObjectLayout.ModeKey]);
        }
        finally
        {
            _ = LibCUmask(umask);
        }
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "umask")]
    private static extern uint LibCUmask(uint mask);

    [Fact]
    public async Task In_async_mode_a_file_read_written_or_made_is_closed_without_a_flush_and_its_change_still_goes_up()
    {
        await File.WriteAllTextAsync(Mounted("read-me.txt"), "contents");
        await _mounted.WaitForClosesAsync();

        var before = _mounted.Mount.FlushesServed;
        Assert.Equal("contents", await File.ReadAllTextAsync(Mounted("read-me.txt")));
        await File.AppendAllTextAsync(Mounted("read-me.txt"), " and more");
        await File.WriteAllTextAsync(Mounted("new.txt"), "made");
        await _mounted.WaitForClosesAsync();

        // FOPEN_NOFLUSH on every open of an async drive (a reader's, a writer's, a create's): the kernel sends no FLUSH at
        // close(2). The changes still reach the engine at the last close (SyncUploadTests: a sync drive's closes flush).
        Assert.False(_rig.Engine.ClosesUpload);
        Assert.Equal(0, _mounted.Mount.FlushesServed - before);
        Assert.Equal("contents and more", await File.ReadAllTextAsync(Mounted("read-me.txt")));
        Assert.Equal(FileState.Dirty, _rig.StateOf("read-me.txt"));
        await _rig.Engine.UploadAsync("read-me.txt");
        await _rig.Engine.UploadAsync("new.txt");
        Assert.Equal("contents and more"u8.ToArray(), await _rig.ObjectBytesAsync("read-me.txt"));
        Assert.Equal("made"u8.ToArray(), await _rig.ObjectBytesAsync("new.txt"));
    }

    [Fact]
    public async Task The_engine_hears_which_process_opened_a_file_and_listed_a_folder()
    {
        await File.WriteAllTextAsync(Mounted("note.txt"), "hello");

        var cat = Run("cat", Mounted("note.txt"));
        var ls = Run("ls", _mounted.Root);

        Assert.Equal((0, "hello"), (cat.ExitCode, cat.Output));
        Assert.Contains(_recorder.Calls, c => c is { Operation: "open", Path: "note.txt" } && c.Caller.ImageName == "cat" && c.Caller.ProcessId == cat.Pid);
        Assert.Contains(_recorder.Calls, c => c is { Operation: "enumerate", Path: "" } && c.Caller.ImageName == "ls" && c.Caller.ProcessId == ls.Pid);
    }

    [Fact]
    public async Task The_state_shows_as_an_extended_attribute_that_applications_cannot_set()
    {
        await File.WriteAllTextAsync(Mounted("x.txt"), "x");

        var read = Run("getfattr", "--only-values", "-n", FuseMount.StateAttribute, Mounted("x.txt"));
        var listed = Run("getfattr", "-d", Mounted("x.txt"));
        var set = Run("setfattr", "-n", FuseMount.StateAttribute, "-v", "Cached", Mounted("x.txt"));

        Assert.Equal("Dirty", read.Output.Trim());
        Assert.Contains(FuseMount.StateAttribute, listed.Output, StringComparison.Ordinal);
        Assert.NotEqual(0, set.ExitCode);
        Assert.Equal(FileState.Dirty, _rig.StateOf("x.txt"));
    }

    [Fact]
    public async Task File_capabilities_are_refused_through_the_mount_and_never_reach_the_cache_file()
    {
        await File.WriteAllTextAsync(Mounted("tool"), "#!/bin/sh\n");

        // What `setcap cap_net_raw+ep` writes: revision 2, effective, CAP_NET_RAW permitted.
        var capability = Run("setfattr", "-n", "security.capability", "-v", "0x0100000200200000000000000000000000000000", Mounted("tool"));
        var user = Run("setfattr", "-n", "user.note", "-v", "kept", Mounted("tool"));
        var inCache = Run("getfattr", "-n", "security.capability", _rig.Local("tool"));

        Assert.NotEqual(0, capability.ExitCode);
        Assert.Contains("Operation not supported", capability.Errors, StringComparison.Ordinal);
        Assert.NotEqual(0, inCache.ExitCode); // no such attribute on the cache file
        Assert.Equal(0, user.ExitCode);
        Assert.Equal("kept", Run("getfattr", "--only-values", "-n", "user.note", Mounted("tool")).Output);
        // Under which the kernel ignores capabilities and set-id bits, whatever a mode from the bucket says.
        var options = File.ReadLines("/proc/self/mountinfo").Select(l => l.Split(' ')).Single(f => f[4] == _mounted.Root)[5].Split(',');
        Assert.Contains("nosuid", options);
        Assert.Contains("nodev", options);
    }

    [Fact]
    public void A_name_that_is_not_utf8_is_refused_and_nothing_is_written_to_the_cache()
    {
        var touch = Run("bash", "-c", "touch \"$1\"/$'bad\\xff.txt'", "bash", _mounted.Root);

        Assert.NotEqual(0, touch.ExitCode);
        Assert.Equal([".geodrive"], Directory.EnumerateFileSystemEntries(_rig.CachePath).Select(Path.GetFileName));
    }

    [Fact]
    public async Task A_stub_truncated_on_open_by_a_shell_redirect_is_not_recalled()
    {
        await File.WriteAllBytesAsync(Mounted("old.bin"), DriveRig.RandomBytes(100_000, 1));
        await _mounted.WaitForClosesAsync();
        _rig.Clock.Advance(TimeSpan.FromHours(1));
        await _rig.Engine.TickAsync();
        await _rig.Engine.StubAsync("old.bin");

        var shell = Run("bash", "-c", "echo new > \"$1\"", "bash", Mounted("old.bin"));

        Assert.Equal(0, shell.ExitCode);
        Assert.Equal("new\n", await File.ReadAllTextAsync(Mounted("old.bin")));
        Assert.Empty(_rig.Engine.ReadEvents(kind: DriveEventKind.Recall));
    }

    [Fact]
    public void Links_are_refused_with_a_permission_error()
    {
        File.WriteAllText(Mounted("target.txt"), "t");

        var symlink = Run("ln", "-s", "target.txt", Mounted("link.txt"));
        var hardLink = Run("ln", Mounted("target.txt"), Mounted("hard.txt"));

        Assert.Contains("not permitted", symlink.Errors, StringComparison.Ordinal);
        Assert.Contains("not permitted", hardLink.Errors, StringComparison.Ordinal);
    }

    /// <summary>
    /// Issue 13: a read is answered with the cache file's descriptor, and libfuse splices the bytes (reads of two pages
    /// and more) or reads them itself (smaller ones). Either way a reader gets the file's bytes up to its end: files of
    /// sizes around the page and the kernel's 128 KiB read, read whole and at seeded random offsets and lengths.
    /// </summary>
    [Fact]
    public async Task Reads_at_any_offset_and_length_return_the_files_bytes_and_stop_at_its_end()
    {
        var seed = Environment.TickCount;
        var random = new Random(seed);
        int[] sizes = [0, 1, 4095, 5000, 8192, 131_073, 1_000_003];
        foreach (var size in sizes)
        {
            await File.WriteAllBytesAsync(Mounted($"r{size}.bin"), DriveRig.RandomBytes(size, size));
        }
        await _mounted.WaitForClosesAsync();

        foreach (var size in sizes)
        {
            var bytes = DriveRig.RandomBytes(size, size);
            // A new open drops the kernel's cached pages of the file, so every read below reaches the service.
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Mounted($"r{size}.bin")));
            using var handle = File.OpenHandle(Mounted($"r{size}.bin"));
            for (var i = 0; i < 20; i++)
            {
                var offset = random.Next(0, size + 10);
                var buffer = new byte[random.Next(1, 300_000)];
                var read = RandomAccess.Read(handle, buffer, offset);
                var expected = Math.Max(0, Math.Min(buffer.Length, size - offset));
                Assert.True(read == expected, $"seed {seed}: {size}-byte file, {buffer.Length} bytes at {offset}: {read} read, {expected} expected");
                Assert.True(bytes.AsSpan(Math.Min(offset, size), read).SequenceEqual(buffer.AsSpan(0, read)), $"seed {seed}: other bytes at {offset} of the {size}-byte file");
            }
        }
    }
}
