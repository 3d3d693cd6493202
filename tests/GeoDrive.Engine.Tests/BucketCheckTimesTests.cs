using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Tests;

/// <summary>When a path was last compared with the bucket: fresh within updateWait, forgotten on request, pruned as it grows.</summary>
public sealed class BucketCheckTimesTests
{
    private static readonly DateTimeOffset Start = new(2026, 11, 30, 1, 0, 0, TimeSpan.Zero);
    private static readonly TimeSpan Wait = TimeSpan.FromMinutes(5);

    [Fact]
    public void A_path_checked_is_fresh_for_its_wait_and_no_longer()
    {
        var times = new BucketCheckTimes();
        times.Mark("projects/plan.docx", Start, Wait);

        Assert.True(times.IsFresh("projects/plan.docx", Start + Wait - TimeSpan.FromTicks(1), Wait));
        Assert.False(times.IsFresh("projects/plan.docx", Start + Wait, Wait));
        Assert.False(times.IsFresh("projects/other.docx", Start, Wait));
        Assert.False(times.IsFresh("projects/plan.docx", Start, TimeSpan.Zero));
    }

    [Fact]
    public void A_forgotten_path_is_asked_again_and_others_stay_fresh()
    {
        var times = new BucketCheckTimes();
        times.Mark("a/one.txt", Start, Wait);
        times.Mark("a/two.txt", Start, Wait);

        times.Forget("a/one.txt");

        Assert.False(times.IsFresh("a/one.txt", Start, Wait));
        Assert.True(times.IsFresh("a/two.txt", Start, Wait));
    }

    [Fact]
    public void Past_fifty_thousand_paths_the_stale_ones_are_dropped_and_the_fresh_ones_kept()
    {
        var times = new BucketCheckTimes();
        for (var i = 0; i < 50_000; i++)
        {
            times.Mark($"old/f{i}.bin", Start, Wait);
        }
        var later = Start + Wait + TimeSpan.FromSeconds(1);
        for (var i = 0; i < 10; i++)
        {
            times.Mark($"new/f{i}.bin", later, Wait);
        }

        Assert.Equal(10, times.Count);
        Assert.True(times.IsFresh("new/f0.bin", later, Wait));
        Assert.False(times.IsFresh("old/f0.bin", later, Wait));
    }
}
