using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class GetCloudDriveEventTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudDriveEvent");
        Contract.Parameters(cmdlet, "Drive", "After", "Before", "Kind", "Path", "Newest");
        Contract.Mandatory(cmdlet, "Drive", false);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.Wildcards(cmdlet, "Drive");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Wildcards(cmdlet, "Path");
        Assert.Equal("GeoDrive.Core.Model.DriveEventKind[]", cmdlet.Parameters["Kind"].ParameterType.FullName);
        Contract.Type(cmdlet, "After", typeof(DateTime));
        Contract.Type(cmdlet, "Newest", typeof(int));
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveEventInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudDriveEvent -Drive finance -Kind Upload,Stub -Newest 5", "GetCloudDriveEventCommand");

    [Fact]
    public void A_drive_from_Get_CloudDrive_binds_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Get-CloudDriveEvent -Path '*.pdf'", "GetCloudDriveEventCommand");

    [Fact]
    public void Kind_completes_the_engine_event_kinds_with_Tab()
    {
        var completions = Session.Invoke("$s = 'Get-CloudDriveEvent -Kind Re'; (TabExpansion2 -inputScript $s -cursorColumn $s.Length).CompletionMatches.CompletionText")
            .Select(o => o?.ToString()).ToList();
        Assert.Contains("Recall", completions);
        Assert.Contains("Rename", completions);
        Assert.DoesNotContain("Upload", completions);
    }

    [Fact]
    public void An_unknown_kind_is_refused_before_anything_is_sent()
    {
        var error = Session.InvokeExpectingError("Get-CloudDriveEvent -Drive finance -Kind Uploaded");
        // PowerShell's own refusal of an enum value lists the valid kinds.
        Assert.Equal("CannotConvertArgumentNoMessage,GeoDrive.Commands.GetCloudDriveEventCommand", error.FullyQualifiedErrorId);
        Assert.Contains("Upload", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Newest_must_be_positive()
    {
        var error = Session.InvokeExpectingError("Get-CloudDriveEvent -Drive finance -Newest 0");
        Assert.Equal("ParameterArgumentValidationError,GeoDrive.Commands.GetCloudDriveEventCommand", error.FullyQualifiedErrorId);
    }
}
