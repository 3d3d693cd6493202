using GeoDrive.Policies.Model;

namespace GeoDrive.Policies.Tests.Model;

public sealed class CronScheduleTests
{
    [Theory]
    [InlineData("0 6 * * 1-5")]
    [InlineData("*/15 * * * *")]
    [InlineData("0 8-18/2 * * MON-FRI")]
    [InlineData("30 5 1,15 JAN,jul *")]
    [InlineData("0 0 * * 7")]
    [InlineData("5/10 * * * *")]
    public void Crontab_expressions_are_accepted(string expression) =>
        Assert.True(CronSchedule.TryParse(expression, out _, out var error), error);

    [Theory]
    [InlineData("0 25 * * 1-5", "'25' is not a valid hour")]
    [InlineData("0 6 * *", "has 4 field(s)")]
    [InlineData("0 6 * * * *", "has 6 field(s)")]
    [InlineData("60 * * * *", "not a valid minute")]
    [InlineData("* * 0 * *", "not a valid day of month")]
    [InlineData("* * * 13 *", "not a valid month")]
    [InlineData("* * * * 8", "not a valid day of week")]
    [InlineData("* * * * MONDAY", "not a valid day of week")]
    [InlineData("*/0 * * * *", "step")]
    [InlineData("5-1 * * * *", "runs backwards")]
    [InlineData("@sometimes", "not a known macro")]
    [InlineData("0 6 * * MON-", "not a valid day of week")]
    [InlineData("every day", "has 2 field(s)")]
    public void Bad_expressions_are_refused_with_the_field_at_fault(string expression, string words)
    {
        Assert.False(CronSchedule.TryParse(expression, out _, out var error));
        Assert.Contains(words, error, StringComparison.Ordinal);
        Assert.Throws<FormatException>(() => CronSchedule.Parse(expression));
    }

    [Fact]
    public void A_weekday_morning_schedule_fires_on_weekday_mornings_only()
    {
        var s = CronSchedule.Parse("0 6 * * 1-5");
        Assert.True(s.Matches(new DateTime(2026, 1, 5, 6, 0, 0)));   // Monday
        Assert.False(s.Matches(new DateTime(2026, 1, 5, 6, 1, 0)));
        Assert.False(s.Matches(new DateTime(2026, 1, 4, 6, 0, 0)));  // Sunday
        Assert.Equal(new DateTime(2026, 1, 5, 6, 0, 0), s.NextAfter(new DateTime(2026, 1, 3, 12, 0, 0)));
        Assert.Equal(new DateTime(2026, 1, 6, 6, 0, 0), s.NextAfter(new DateTime(2026, 1, 5, 6, 0, 0)));
    }

    [Fact]
    public void Day_of_month_and_day_of_week_together_fire_on_either_as_crontab_does()
    {
        var s = CronSchedule.Parse("0 0 13 * 5");
        Assert.True(s.Matches(new DateTime(2026, 2, 13, 0, 0, 0)));  // the 13th (a Friday too)
        Assert.True(s.Matches(new DateTime(2026, 1, 2, 0, 0, 0)));   // a Friday
        Assert.True(s.Matches(new DateTime(2026, 1, 13, 0, 0, 0)));  // a Tuesday the 13th
        Assert.False(s.Matches(new DateTime(2026, 1, 14, 0, 0, 0)));
    }

    [Fact]
    public void Seven_is_sunday_and_a_schedule_that_never_fires_has_no_next_time()
    {
        Assert.True(CronSchedule.Parse("0 0 * * 7").Matches(new DateTime(2026, 1, 4)));
        Assert.Null(CronSchedule.Parse("0 0 30 2 *").NextAfter(new DateTime(2026, 1, 1)));
    }

    [Theory]
    [InlineData("@daily", "0 0 * * *")]
    [InlineData("@HOURLY", "0 * * * *")]
    [InlineData("@weekly", "0 0 * * 0")]
    [InlineData("@monthly", "0 0 1 * *")]
    [InlineData("@yearly", "0 0 1 1 *")]
    public void Macros_fire_as_their_five_fields_do(string macro, string fields)
    {
        var m = CronSchedule.Parse(macro);
        var f = CronSchedule.Parse(fields);
        var t = new DateTime(2026, 1, 3, 7, 13, 0);
        for (var i = 0; i < 5; i++)
        {
            t = f.NextAfter(t)!.Value;
            Assert.Equal(t, m.NextAfter(t.AddMinutes(-1)));
        }
        Assert.Equal(macro, m.Expression);
    }

    [Fact]
    public void In_a_time_zone_a_schedule_fires_at_wall_clock_time_across_daylight_saving_changes()
    {
        var berlin = TimeZoneInfo.FindSystemTimeZoneById("Europe/Berlin");
        var s = CronSchedule.Parse("30 2 * * *");
        // Winter (UTC+1): 02:30 local is 01:30 UTC.
        Assert.Equal(new DateTimeOffset(2026, 1, 6, 1, 30, 0, TimeSpan.Zero), s.NextUtcAfter(new DateTimeOffset(2026, 1, 5, 9, 0, 0, TimeSpan.Zero), berlin));
        // 2026-03-29 has no 02:30 in Berlin (clocks jump 02:00 -> 03:00): the next firing is the 30th, in summer time (UTC+2).
        Assert.Equal(new DateTimeOffset(2026, 3, 30, 0, 30, 0, TimeSpan.Zero), s.NextUtcAfter(new DateTimeOffset(2026, 3, 28, 12, 0, 0, TimeSpan.Zero), berlin));
        // 2026-10-25 has 02:30 twice: it fires at the first (00:30 UTC) only.
        var first = s.NextUtcAfter(new DateTimeOffset(2026, 10, 24, 12, 0, 0, TimeSpan.Zero), berlin);
        Assert.Equal(new DateTimeOffset(2026, 10, 25, 0, 30, 0, TimeSpan.Zero), first);
        Assert.Equal(new DateTimeOffset(2026, 10, 26, 1, 30, 0, TimeSpan.Zero), s.NextUtcAfter(first!.Value, berlin));
        Assert.Equal(new DateTimeOffset(2026, 1, 6, 2, 30, 0, TimeSpan.Zero), s.NextUtcAfter(new DateTimeOffset(2026, 1, 5, 9, 0, 0, TimeSpan.Zero), TimeZoneInfo.Utc));
    }
}
