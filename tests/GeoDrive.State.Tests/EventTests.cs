using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.State.Tests;

public sealed class EventTests : IDisposable
{
    private readonly TempDirectory _dir = new("state-events");

    public void Dispose() => _dir.Dispose();

    private string DbPath => _dir.Combine("index.db");

    private static DriveEvent Event(DriveEventKind kind, int minute, string? path = null) => new()
    {
        Kind = kind,
        TimeUtc = Samples.T0.AddMinutes(minute),
        Path = path,
        Message = $"{kind} at {minute}",
    };

    [Fact]
    public void Appended_events_get_ascending_ids_and_read_back_newest_first_with_every_field()
    {
        using var index = LiteDbFileIndex.Open(DbPath);
        var first = Event(DriveEventKind.Upload, 0, "a.txt");
        var second = new DriveEvent
        {
            Kind = DriveEventKind.Error,
            TimeUtc = new DateTimeOffset(2026, 1, 5, 10, 0, 0, TimeSpan.FromHours(1)).AddTicks(17),
            Path = "b.txt",
            Message = "upload failed",
            ErrorId = "StoreError",
        };
        var third = Event(DriveEventKind.Service, 2);
        index.AppendEvent(first);
        index.AppendEvent(second);
        index.AppendEvent(third);

        Assert.True(first.Id > 0 && second.Id > first.Id && third.Id > second.Id);
        var events = index.ReadEvents();
        Assert.Equal([third.Id, second.Id, first.Id], events.Select(e => e.Id));

        var back = events[1];
        Assert.Equal(DriveEventKind.Error, back.Kind);
        Assert.Equal(second.TimeUtc.UtcTicks, back.TimeUtc.UtcTicks);
        Assert.Equal(TimeSpan.Zero, back.TimeUtc.Offset);
        Assert.Equal("b.txt", back.Path);
        Assert.Equal("upload failed", back.Message);
        Assert.Equal("StoreError", back.ErrorId);
        Assert.Null(events[0].Path);
        Assert.Null(events[0].ErrorId);
    }

    [Fact]
    public void ReadEvents_filters_by_time_and_kind_and_honours_the_limit()
    {
        using var index = LiteDbFileIndex.Open(DbPath);
        for (var minute = 0; minute < 30; minute++)
        {
            index.AppendEvent(Event(minute % 3 == 0 ? DriveEventKind.Stub : DriveEventKind.Upload, minute));
        }

        Assert.Equal(10, index.ReadEvents(sinceUtc: Samples.T0.AddMinutes(20)).Count);
        Assert.All(index.ReadEvents(sinceUtc: Samples.T0.AddMinutes(20)), e => Assert.True(e.TimeUtc >= Samples.T0.AddMinutes(20)));
        Assert.Equal(10, index.ReadEvents(kind: DriveEventKind.Stub).Count);
        Assert.Equal(4, index.ReadEvents(sinceUtc: Samples.T0.AddMinutes(18), kind: DriveEventKind.Stub).Count);

        var limited = index.ReadEvents(limit: 5);
        Assert.Equal(Enumerable.Range(25, 5).Reverse().Select(m => Samples.T0.AddMinutes(m)), limited.Select(e => e.TimeUtc));
        Assert.Empty(index.ReadEvents(limit: 0));
        Assert.Empty(index.ReadEvents(kind: DriveEventKind.Recall));
    }

    [Fact]
    public void The_event_log_is_pruned_to_the_newest_MaxEvents()
    {
        var options = new LiteDbFileIndexOptions { MaxEvents = 50, PruneEventsEvery = 10 };
        using (var index = LiteDbFileIndex.Open(DbPath, options))
        {
            for (var i = 0; i < 205; i++)
            {
                index.AppendEvent(Event(DriveEventKind.Upload, i));
            }

            // Pruned after the 200th append; 5 more since.
            var events = index.ReadEvents(limit: int.MaxValue);
            Assert.Equal(55, events.Count);
            Assert.Equal(Samples.T0.AddMinutes(204), events[0].TimeUtc);
            Assert.Equal(Samples.T0.AddMinutes(150), events[^1].TimeUtc);
        }

        // Opening prunes too, and ids keep ascending across a restart.
        using var reopened = LiteDbFileIndex.Open(DbPath, options);
        var kept = reopened.ReadEvents(limit: int.MaxValue);
        Assert.Equal(50, kept.Count);
        var next = Event(DriveEventKind.Service, 999);
        reopened.AppendEvent(next);
        Assert.True(next.Id > kept[0].Id);
    }

    [Fact]
    public async Task Events_appended_from_many_threads_are_each_read_back_once_and_a_read_sees_every_append_before_it()
    {
        // Appends are queued, not waited for: a reader right after its own append must still find it.
        using var index = LiteDbFileIndex.Open(DbPath);
        const int threads = 4, each = 150;
        var appended = await Task.WhenAll(Enumerable.Range(0, threads).Select(t => Task.Run(() =>
        {
            var ids = new List<long>();
            for (var i = 0; i < each; i++)
            {
                var appendedNow = Event(DriveEventKind.Upload, i, $"t{t}/f{i}");
                index.AppendEvent(appendedNow);
                ids.Add(appendedNow.Id);
                if (i % 25 == 0)
                {
                    Assert.Contains(appendedNow.Id, index.ReadEvents(kind: DriveEventKind.Upload, limit: int.MaxValue).Select(e => e.Id));
                }
            }
            return ids;
        })));

        foreach (var ids in appended)
        {
            Assert.Equal(ids.Order(), ids);
        }
        var read = index.ReadEvents(limit: int.MaxValue);
        Assert.Equal(appended.SelectMany(ids => ids).Order(), read.Select(e => e.Id).Order());
        Assert.Equal(threads * each, read.Select(e => e.Path).Distinct().Count());
    }
}
