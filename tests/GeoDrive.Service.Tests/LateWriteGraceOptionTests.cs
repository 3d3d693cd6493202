using GeoDrive.Core.Errors;
using GeoDrive.Service.Hosting;

namespace GeoDrive.Service.Tests;

/// <summary>How long after a start the deletes an earlier run owed are looked at again (--late-write-grace, GEODRIVE_LATE_WRITE_GRACE).</summary>
public sealed class LateWriteGraceOptionTests
{
    private static ServiceOptions Options(string[] args, Dictionary<string, string>? environment = null) =>
        ServiceOptions.FromArgs(args, name => environment?.GetValueOrDefault(name));

    [Fact]
    public void Without_the_option_a_request_sent_before_a_crash_has_two_minutes_to_land() =>
        Assert.Equal(TimeSpan.FromMinutes(2), Options([]).LateWriteGrace);

    [Fact]
    public void The_command_line_takes_a_duration_as_policies_write_one_and_wins_over_the_environment() =>
        Assert.Equal(TimeSpan.FromSeconds(90),
            Options(["--late-write-grace", "90s"], new() { [ServiceOptions.LateWriteGraceEnvironmentVariable] = "10m" }).LateWriteGrace);

    [Fact]
    public void The_environment_sets_it_when_the_command_line_does_not() =>
        Assert.Equal(TimeSpan.FromMinutes(10), Options([], new() { [ServiceOptions.LateWriteGraceEnvironmentVariable] = "10m" }).LateWriteGrace);

    [Theory]
    [InlineData("90")]
    [InlineData("soon")]
    public void A_value_that_is_no_duration_stops_the_start_with_its_remedy(string given)
    {
        var refused = Assert.Throws<GeoDriveException>(() => Options(["--late-write-grace", given]));

        Assert.Equal(ErrorIds.ServiceOptionRefused, refused.ErrorId);
        Assert.Contains($"'{given}'", refused.Message, StringComparison.Ordinal);
        Assert.Contains("2m", refused.Remedy, StringComparison.Ordinal);
    }
}
