using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Renames through a real FUSE mount racing the engine's own work (stubbing, uploads): whatever the
/// order, every file reads back its bytes, the bucket ends holding them under the new names, and no
/// stub's zeros ever reach the bucket.
/// </summary>
public sealed class RenameSafetyTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int MiB = 1024 * 1024;

    private (DriveRig Rig, FuseMountedDrive Mounted) Mount()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: rename-safety }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 0s }
            """));
        var mounted = Mount(rig.Engine);
        return (rig, mounted);
    }

    [Fact]
    public async Task A_file_renamed_while_open_is_not_stubbed_under_its_open_handle_and_keeps_every_byte()
    {
        var (rig, mounted) = Mount();
        var first = DriveRig.RandomBytes(4 * MiB, 1);
        var second = DriveRig.RandomBytes(MiB, 2);
        var log = Path.Combine(mounted.Root, "app.log");
        await using (var handle = new FileStream(log, FileMode.Append, FileAccess.Write))
        {
            // exec 3>>app.log; write 4 MB; mv app.log app.log.1 — with the handle still open.
            await handle.WriteAsync(first);
            await handle.FlushAsync();
            File.Move(log, log + ".1");
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();

            // Open (so not uploaded either): refused as busy or as not uploaded, never stubbed.
            var refused = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.StubAsync("app.log.1"));
            Assert.Contains(refused.ErrorId, new[] { ErrorIds.FileBusy, ErrorIds.FileNotUploaded });

            await handle.WriteAsync(second);
        }
        await mounted.WaitForClosesAsync();
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();

        byte[] expected = [.. first, .. second];
        Assert.Equal(expected, await File.ReadAllBytesAsync(log + ".1"));
        Assert.Equal(expected, await rig.ObjectBytesAsync("app.log.1"));
    }

    [Fact]
    public async Task A_folder_renamed_while_its_files_are_being_stubbed_loses_no_byte_and_never_uploads_zeros()
    {
        const int files = 400;
        var (rig, mounted) = Mount();
        var contents = new Dictionary<string, byte[]>();
        Directory.CreateDirectory(Path.Combine(mounted.Root, "old"));
        for (var i = 0; i < files; i++)
        {
            var bytes = DriveRig.RandomBytes(4096 + i, 1000 + i);
            contents[$"f{i:D4}.bin"] = bytes;
            await File.WriteAllBytesAsync(Path.Combine(mounted.Root, "old", $"f{i:D4}.bin"), bytes);
        }
        await mounted.WaitForClosesAsync();
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        Assert.All(contents.Keys, name => Assert.Equal(FileState.Cached, rig.StateOf("old/" + name)));

        // Invoke-ForceStub -Path 'new/**' running while the folder is renamed: it stubs what the index
        // already shows under the new name while the rename is still being recorded, last names first
        // (the rename records them in name order, so the two meet in the middle).
        using var renamed = new CancellationTokenSource();
        var stubber = Task.Run(async () =>
        {
            var stubbed = new HashSet<string>();
            while (!renamed.IsCancellationRequested || stubbed.Count == 0)
            {
                foreach (var entry in rig.Engine.FindFiles("new/**").Where(e => e.State == FileState.Cached && !stubbed.Contains(e.Path)).OrderByDescending(e => e.Path, StringComparer.Ordinal))
                {
                    try
                    {
                        await rig.Engine.StubAsync(entry.Path);
                        stubbed.Add(entry.Path);
                    }
                    catch (GeoDriveException)
                    {
                        // Refused (changed, moved, busy): the rename won this one.
                    }
                }
                await Task.Yield();
            }
            return stubbed.Count;
        });
        Directory.Move(Path.Combine(mounted.Root, "old"), Path.Combine(mounted.Root, "new"));
        await renamed.CancelAsync();
        await stubber;

        // Everything settles: uploads under the new names, owed deletes of the old keys.
        for (var round = 0; round < 3; round++)
        {
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();
        }
        foreach (var (name, bytes) in contents)
        {
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(mounted.Root, "new", name)));
        }
        await mounted.WaitForClosesAsync();
        for (var round = 0; round < 3; round++)
        {
            await rig.Engine.TickAsync();
            await rig.Engine.WhenUploadsIdleAsync();
        }
        foreach (var (name, bytes) in contents)
        {
            var inBucket = await rig.ObjectBytesAsync("new/" + name);
            Assert.True(inBucket is not null && inBucket.AsSpan().SequenceEqual(bytes), $"new/{name}: the bucket does not hold its bytes");
            Assert.Null(await rig.ObjectBytesAsync("old/" + name));
        }
    }

    [Fact]
    public async Task A_stubs_mark_is_not_listed_read_set_or_removed_through_the_mount()
    {
        var (rig, mounted) = Mount();
        var path = Path.Combine(mounted.Root, "marked.bin");
        await File.WriteAllBytesAsync(path, DriveRig.RandomBytes(10_000, 3));
        await mounted.WaitForClosesAsync();
        await rig.Engine.TickAsync();
        await rig.Engine.WhenUploadsIdleAsync();
        await rig.Engine.StubAsync("marked.bin");

        var listed = Run("getfattr", "-d", "-m", "-", path);
        Assert.Contains("user.geodrive.state", listed.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("user.geodrive.stub", listed.Output, StringComparison.Ordinal);
        Assert.NotEqual(0, Run("getfattr", "-n", "user.geodrive.stub", path).ExitCode);
        Assert.NotEqual(0, Run("setfattr", "-x", "user.geodrive.stub", path).ExitCode);
        Assert.NotEqual(0, Run("setfattr", "-n", "user.geodrive.stub", "-v", "forged", path).ExitCode);
        Assert.NotNull(GeoDrive.Engine.Files.StubMark.Read(rig.Local("marked.bin")));
    }

    private static (int ExitCode, string Output) Run(string tool, params string[] arguments)
    {
        using var process = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo(tool, arguments)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!;
        var output = process.StandardOutput.ReadToEnd() + process.StandardError.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, output);
    }
}
