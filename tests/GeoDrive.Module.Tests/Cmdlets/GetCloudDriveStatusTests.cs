namespace GeoDrive.Module.Tests;

public sealed class GetCloudDriveStatusTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudDriveStatus");
        Contract.Parameters(cmdlet, "Name");
        Contract.Mandatory(cmdlet, "Name", false);
        Contract.ByPropertyName(cmdlet, "Name");
        Contract.Type(cmdlet, "Name", typeof(string[]));
        Contract.Wildcards(cmdlet, "Name");
        Contract.CompletesDriveNames(cmdlet, "Name");
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveStatusInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudDriveStatus", "GetCloudDriveStatusCommand");

    [Fact]
    public void A_name_bound_by_property_name_reaches_the_service() =>
        AssertServiceNotRunning("[pscustomobject]@{ Name = 'finance' } | Get-CloudDriveStatus", "GetCloudDriveStatusCommand");

    [Fact]
    public void Tab_completion_of_drive_names_is_silent_when_the_service_is_down()
    {
        var completions = Session.Invoke("(TabExpansion2 -inputScript 'Get-CloudDriveStatus -Name fin' -cursorColumn 30).CompletionMatches");
        Assert.Empty(Session.LastErrors);
        Assert.Empty(completions);
    }
}
