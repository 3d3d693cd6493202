using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// The kernel sends a file's release after close(2) has returned, so an application can open the file again while the
/// mount is still telling the engine of its last close. The engine must hear the close before the new open: told after
/// it, the close counted the new handle closed too, and the file was uploaded and stubbed under its writer, whose next
/// bytes then went into the stub (randomized crash run, seed 1847647792: the bucket got zeros where the file's first
/// bytes were).
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class CloseReportOrderTests(S3ServerFixture s3, ITestOutputHelper output) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    [Fact]
    public async Task A_file_opened_again_while_its_last_close_is_still_being_told_stays_open_to_the_engine_and_is_never_stubbed_under_its_writer()
    {
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: close-order-tests }
            spec:
              upload: { settle: 1h }
            """));
        // A slow engine for the file's second close (a truncation's): it hears of it once the file's next open has reached it, or
        // after 2 s (a mount that makes the open wait for the close never lets that open through first).
        var recorder = new CallerRecorder(rig.Engine);
        var closeHeld = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var openedAgain = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var closes = 0;
        var closeToldAfterTheOpen = false;
        recorder.Opening += path =>
        {
            if (path == "ledger.bin" && closeHeld.Task.IsCompleted)
            {
                openedAgain.TrySetResult();
            }
        };
        recorder.CloseDelay = path =>
        {
            if (path != "ledger.bin" || Interlocked.Increment(ref closes) != 2)
            {
                return Task.CompletedTask;
            }
            closeHeld.TrySetResult();
            return HoldAsync();
        };
        async Task HoldAsync() => closeToldAfterTheOpen = await Task.WhenAny(openedAgain.Task, Task.Delay(TimeSpan.FromSeconds(2))) == openedAgain.Task;
        var mounted = Mount(recorder);
        var path = Path.Combine(mounted.Root, "ledger.bin");
        var expected = DriveRig.RandomBytes(200_000, 3);
        await File.WriteAllBytesAsync(path, expected);
        await mounted.WaitForClosesAsync();
        using (var truncating = new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0))
        {
            truncating.SetLength(150_000);
        }
        expected = expected[..150_000];
        await closeHeld.Task;

        // Opened again while the mount still tells the engine of the truncation's close (off the test's thread: the open may wait).
        await using var writer = await Task.Run(() => new FileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0));
        output.WriteLine($"the engine heard of the open before the close it followed: {closeToldAfterTheOpen}");
        writer.Position = expected.Length;
        writer.Write("first change"u8);
        expected = [.. expected, .. "first change"u8.ToArray()];

        // Uploaded or not, a file open for writing is never stubbed.
        try
        {
            output.WriteLine($"upload while open: {(await rig.Engine.UploadAsync("ledger.bin")).State}");
        }
        catch (GeoDriveException ex)
        {
            output.WriteLine($"upload while open: {ex.ErrorId}");
        }
        var refusal = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.StubAsync("ledger.bin"));
        output.WriteLine($"stub while open: {refusal.ErrorId} {refusal.Message}");
        Assert.NotEqual(FileState.Stubbed, rig.StateOf("ledger.bin"));

        writer.Position = expected.Length;
        writer.Write("second change"u8);
        expected = [.. expected, .. "second change"u8.ToArray()];
        await writer.DisposeAsync();
        await mounted.WaitForClosesAsync();

        Assert.Equal(expected, await File.ReadAllBytesAsync(rig.Local("ledger.bin")));
        Assert.Equal(FileState.Cached, (await rig.Engine.UploadAsync("ledger.bin")).State);
        Assert.Equal(expected, await rig.ObjectBytesAsync("ledger.bin"));
    }
}
