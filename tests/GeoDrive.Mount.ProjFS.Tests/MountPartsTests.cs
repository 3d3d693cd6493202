using GeoDrive.Mount.ProjFS.Notifications;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>The small platform-neutral parts of the mount: data chunks, pending commands, open counts.</summary>
public sealed class MountPartsTests
{
    private const int MiB = 1024 * 1024;

    [Fact]
    public void File_data_is_cut_into_aligned_chunks_and_the_last_ends_at_the_end_of_the_file()
    {
        var chunks = FileDataPlan.Chunks(0, 10 * MiB, fileSize: 9 * MiB + 5, chunkSize: 4 * MiB);

        Assert.Equal([new(0, 4 * MiB), new(4 * MiB, 4 * MiB), new(8 * MiB, MiB + 5)], chunks);
        Assert.All(chunks.SkipLast(1), c => Assert.Equal(0, c.Offset % FileDataPlan.Alignment));
    }

    [Fact]
    public void A_request_from_an_offset_covers_exactly_its_range()
    {
        var chunks = FileDataPlan.Chunks(8 * MiB, 2 * MiB, fileSize: 100 * MiB, chunkSize: MiB);

        Assert.Equal([new(8 * MiB, MiB), new(9 * MiB, MiB)], chunks);
        Assert.Empty(FileDataPlan.Chunks(5 * MiB, MiB, fileSize: 5 * MiB, chunkSize: MiB));
    }

    [Fact]
    public void The_chunk_size_must_keep_chunks_aligned()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => FileDataPlan.Chunks(0, 1, 1, 1000));
    }

    [Fact]
    public void A_pending_command_is_completed_once_by_its_work()
    {
        var pending = new PendingCommands();
        var token = pending.Begin(7, CancellationToken.None);

        Assert.False(token.IsCancellationRequested);
        Assert.True(pending.End(7));
        Assert.False(pending.End(7));
        Assert.Equal(0, pending.Count);
    }

    [Fact]
    public void A_cancelled_command_stops_its_work_and_is_not_completed()
    {
        var pending = new PendingCommands();
        var token = pending.Begin(8, CancellationToken.None);

        Assert.True(pending.Cancel(8));

        Assert.True(token.IsCancellationRequested);
        Assert.False(pending.End(8));
    }

    [Fact]
    public void Stopping_the_mount_cancels_every_pending_command()
    {
        using var stopping = new CancellationTokenSource();
        var pending = new PendingCommands();
        var token = pending.Begin(9, stopping.Token);

        stopping.Cancel();

        Assert.True(token.IsCancellationRequested);
    }

    [Fact]
    public void A_file_stays_open_until_its_last_handle_closes_whatever_the_case_of_its_name()
    {
        var open = new OpenCounts();
        open.Opened("Docs/a.txt");
        open.Opened("docs/A.TXT");

        Assert.False(open.Closed("Docs/a.txt"));
        Assert.True(open.IsOpen("DOCS/a.txt"));
        Assert.True(open.Closed("Docs/a.txt"));
        Assert.False(open.IsOpen("Docs/a.txt"));
    }

    [Fact]
    public void A_rename_carries_open_handles_along()
    {
        var open = new OpenCounts();
        open.Opened("old/a.txt");
        open.Opened("older/b.txt");

        open.Renamed("old", "new");

        Assert.True(open.IsOpen("new/a.txt"));
        Assert.False(open.IsOpen("old/a.txt"));
        Assert.True(open.IsOpen("older/b.txt"));
    }
}
