using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

/// <summary>Recall jobs and their history in the drive's index file: every field round-trips and survives reopening.</summary>
public sealed class RecallJobStoreTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-jobs");

    private string DbPath => _dir.Combine(".geodrive", "index.db");

    public void Dispose() => _dir.Dispose();

    [Fact]
    public void A_job_with_its_last_run_survives_reopening_and_names_ignore_case()
    {
        var job = new RecallJobRecord
        {
            Name = "Morning-Prewarm",
            Source = RecallJobSource.Registered,
            Paths = ["Active", "Projects/*/current"],
            Recurse = true,
            Schedule = "0 6 * * 1-5",
            TimeZone = "Europe/Berlin",
            ThrottleLimit = 16,
            RegisteredUtc = new DateTimeOffset(2026, 1, 5, 9, 0, 0, 123, TimeSpan.Zero).AddTicks(4567),
            HandledUntilUtc = new DateTimeOffset(2026, 1, 6, 6, 0, 1, TimeSpan.Zero),
            LastRunStartUtc = new DateTimeOffset(2026, 1, 6, 6, 0, 0, TimeSpan.Zero),
            LastRunEndUtc = new DateTimeOffset(2026, 1, 6, 6, 0, 1, TimeSpan.Zero),
            LastFiles = 3,
            LastBytes = 5_000_000_000,
            LastFailures = 1,
            LastResult = RecallJobResult.PartlyFailed,
            LastMessage = "1 of 4 files failed",
            RunCount = 7,
        };
        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            index.PutRecallJob(job);
            index.PutRecallJob(new RecallJobRecord { Name = "other", Source = RecallJobSource.Policy, Schedule = "@daily" });
        }

        using (var index = LiteDbFileIndex.Open(DbPath))
        {
            var read = Assert.Single(index.ReadRecallJobs(), j => j.Name == "Morning-Prewarm");
            Assert.Equivalent(job, read, strict: true);
            var other = Assert.Single(index.ReadRecallJobs(), j => j.Name == "other");
            Assert.Null(other.LastResult);
            Assert.Null(other.TimeZone);
            Assert.Null(other.LastRunStartUtc);

            Assert.True(index.DeleteRecallJob("MORNING-prewarm"));
            Assert.False(index.DeleteRecallJob("morning-prewarm"));
            Assert.Equal(["other"], index.ReadRecallJobs().Select(j => j.Name));
        }
    }
}
