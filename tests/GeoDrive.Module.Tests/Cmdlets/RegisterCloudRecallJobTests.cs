using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class RegisterCloudRecallJobTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Register-CloudRecallJob");
        Contract.Parameters(cmdlet, "Drive", "Name", "Path", "Recurse", "Schedule", "TimeZone", "ThrottleLimit");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Name", true);
        Contract.Mandatory(cmdlet, "Path", true);
        Contract.Wildcards(cmdlet, "Path");
        Contract.Mandatory(cmdlet, "Schedule", true);
        Contract.Mandatory(cmdlet, "TimeZone", false);
        Contract.Type(cmdlet, "Recurse", typeof(SwitchParameter));
        Contract.Type(cmdlet, "ThrottleLimit", typeof(int));
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Low);
        Contract.Outputs(cmdlet, "GeoDrive.Api.RecallJobInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Register-CloudRecallJob -Drive finance -Name prewarm -Path Active -Recurse -Schedule '0 6 * * 1-5'", "RegisterCloudRecallJobCommand");

    [Fact]
    public void WhatIf_sends_nothing_and_registers_nothing() =>
        AssertNothingFailed("Register-CloudRecallJob -Drive finance -Name prewarm -Path Active -Recurse -Schedule '@daily' -WhatIf");

    [Theory]
    [InlineData("0 25 * * *", "'25' is not a valid hour")]
    [InlineData("0 6 * *", "has 4 field(s)")]
    [InlineData("61 * * * *", "not a valid minute")]
    [InlineData("* * * * FUNDAY", "not a valid day of week")]
    [InlineData("@sometimes", "not a known macro")]
    public void An_invalid_cron_is_refused_with_InvalidCron_naming_the_field_before_anything_is_sent(string schedule, string words)
    {
        // The service is not running: reaching it would say ServiceNotRunning instead.
        var error = Session.InvokeExpectingError("Register-CloudRecallJob -Drive finance -Name prewarm -Path Active -Schedule $s", new Dictionary<string, object?> { ["s"] = schedule });
        Assert.Equal("InvalidCron,GeoDrive.Commands.RegisterCloudRecallJobCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.InvalidArgument, error.CategoryInfo.Category);
        Assert.Contains(words, error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("minute hour day-of-month month day-of-week", error.ErrorDetails.RecommendedAction, StringComparison.Ordinal);
    }

    [Fact]
    public void A_throttle_limit_out_of_range_is_refused_before_anything_is_sent()
    {
        var error = Session.InvokeExpectingError("Register-CloudRecallJob -Drive finance -Name prewarm -Path Active -Schedule '@daily' -ThrottleLimit 0");
        Assert.Equal("ParameterArgumentValidationError,GeoDrive.Commands.RegisterCloudRecallJobCommand", error.FullyQualifiedErrorId);
    }

    [Fact]
    public void A_drive_piped_in_binds_its_Drive_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance' } | Register-CloudRecallJob -Name prewarm -Path Active -Schedule '@hourly'", "RegisterCloudRecallJobCommand");
}
