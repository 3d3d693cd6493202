using GeoDrive.Core.Errors;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

/// <summary>Real child processes (<see cref="IndexHelper"/>) killed with SIGKILL mid-stream.</summary>
public sealed class ProcessKillTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-kill");

    public void Dispose() => _dir.Dispose();

    private string DbPath => _dir.Combine(".geodrive", "index.db");

    [Theory]
    [InlineData(700)]   // within the first auto-checkpoint's worth of log pages
    [InlineData(2_300)] // after several checkpoints
    public void Every_put_acknowledged_before_a_kill_survives_it(int killAfter)
    {
        var acknowledged = -1;
        using (var child = HelperProcess.Start("put", DbPath, "1000000"))
        {
            child.Expect("open");
            while (acknowledged < killAfter)
            {
                acknowledged = Acknowledged(child.ReadLine());
            }

            child.Kill();

            // Lines already printed were acknowledged too.
            foreach (var line in child.ReadToEnd())
            {
                acknowledged = Math.Max(acknowledged, Acknowledged(line));
            }
        }

        using var index = LiteDbFileIndex.Open(DbPath);
        Assert.InRange(index.Count(), acknowledged + 1, acknowledged + 2); // at most one put done but not yet printed
        for (var i = 0; i <= acknowledged; i++)
        {
            var entry = index.Get(IndexHelper.PutEntry(i).Path);
            Assert.True(entry is not null, $"acknowledged put {i} of {acknowledged} was lost");
            Assert.Equal(i, entry.Generation);
            Assert.Equal(IndexHelper.Payload, entry.LastError);
        }
    }

    [Fact]
    public void Deferred_puts_made_before_an_acknowledged_durable_put_survive_a_kill()
    {
        var acknowledged = -1;
        using (var child = HelperProcess.Start("deferred", DbPath, "1000000"))
        {
            child.Expect("open");
            while (acknowledged < 1_500)
            {
                acknowledged = Acknowledged(child.ReadLine());
            }

            child.Kill();
            foreach (var line in child.ReadToEnd())
            {
                acknowledged = Math.Max(acknowledged, Acknowledged(line));
            }
        }

        using var index = LiteDbFileIndex.Open(DbPath);
        for (var i = 0; i <= acknowledged; i++)
        {
            var entry = index.Get(IndexHelper.PutEntry(i).Path);
            Assert.True(entry is not null, $"deferred put {i}, acknowledged by the durable put after it ({acknowledged}), was lost");
            Assert.Equal(i, entry.Generation);
        }
    }

    /// <summary>
    /// A deferred put with no call after it is not held in memory until one comes: it goes to the log by itself
    /// (LiteDbFileIndex.DeferredGather after it), so a kill from then on keeps it. The test waits for its document's
    /// bytes in the log file, the only sign a killed process leaves, with a deadline far above the gather.
    /// </summary>
    [Fact]
    public void A_deferred_put_with_no_later_call_reaches_the_log_by_itself_and_survives_a_kill()
    {
        var log = LiteDbFileIndex.LogPath(DbPath);
        using (var child = HelperProcess.Start("deferred-alone", DbPath))
        {
            child.Expect("put");
            var name = System.Text.Encoding.UTF8.GetBytes(IndexHelper.AlonePath);
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (!(File.Exists(log) && ReadShared(log).AsSpan().IndexOf(name) >= 0))
            {
                Assert.True(DateTime.UtcNow < deadline, $"the deferred put was not in the log 10 s later. stderr: {child.Errors}");
                Thread.Sleep(10);
            }

            child.Kill();
        }

        using var index = LiteDbFileIndex.Open(DbPath);
        Assert.Equal(7, index.Get(IndexHelper.AlonePath)?.Generation);
    }

    private static byte[] ReadShared(string path)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }

    [Fact]
    public void A_folder_rename_interrupted_by_a_kill_is_all_or_nothing()
    {
        const int Entries = 40;
        string lastTarget;
        using (var child = HelperProcess.Start("rename", DbPath, Entries.ToString()))
        {
            child.Expect("open");
            var line = "";
            for (var i = 0; i < 150; i++)
            {
                line = child.ReadLine()!;
            }

            child.Kill();
            var rest = child.ReadToEnd();
            lastTarget = (rest.Count > 0 ? rest[^1] : line).Split(' ')[1];
        }

        using var index = LiteDbFileIndex.Open(DbPath);
        var inA = index.Under("a").Count();
        var inB = index.Under("b").Count();
        Assert.Equal(Entries, index.Count());
        Assert.True((inA, inB) is (Entries, 0) or (0, Entries), $"split folder: {inA} in a/, {inB} in b/");

        // The acknowledged rename holds, or the next one committed before the kill: never an older one.
        Assert.Contains(lastTarget, new[] { "a", "b" });
    }

    [Fact]
    public void A_second_process_gets_CachePathInUse_while_another_holds_the_index()
    {
        using (var holder = HelperProcess.Start("hold", DbPath))
        {
            holder.Expect("ready");

            var refused = Assert.Throws<GeoDriveException>(() => LiteDbFileIndex.Open(DbPath));
            Assert.Equal(ErrorIds.CachePathInUse, refused.ErrorId);
            Assert.Equal(ErrorKind.ResourceUnavailable, refused.Kind);
            Assert.Contains("in use by another GeoDrive service", refused.Message, StringComparison.Ordinal);
            Assert.Contains("choose another cache path", refused.Remedy, StringComparison.Ordinal);

            // The kernel releases the lock of a killed holder: no stale lock to clean up by hand.
            holder.Kill();
        }

        using var index = LiteDbFileIndex.Open(DbPath);
        Assert.Equal(0, index.Count());
    }

    [Fact]
    public void A_child_process_is_refused_while_this_process_holds_the_index()
    {
        using var index = LiteDbFileIndex.Open(DbPath);
        using var child = HelperProcess.Start("hold", DbPath);

        child.Expect($"error {ErrorIds.CachePathInUse}");
    }

    private static int Acknowledged(string? line)
    {
        Assert.NotNull(line);
        Assert.StartsWith("ready ", line, StringComparison.Ordinal);
        return int.Parse(line["ready ".Length..]);
    }
}
