namespace GeoDrive.Module.Tests;

public sealed class GetCloudRecallJobTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Get-CloudRecallJob");
        Contract.Parameters(cmdlet, "Drive", "Name", "InputObject");
        Contract.Mandatory(cmdlet, "Drive", false);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Wildcards(cmdlet, "Drive");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Wildcards(cmdlet, "Name");
        // A drive from Get-CloudDrive has a Name: that must not become the job name.
        Assert.False(Contract.Parameter(cmdlet, "Name").ValueFromPipelineByPropertyName);
        Assert.True(Contract.Parameter(cmdlet, "InputObject").ValueFromPipeline);
        Assert.Equal("GeoDrive.Api.DriveInfo", cmdlet.Parameters["InputObject"].ParameterType.FullName);
        Contract.NoShouldProcess(cmdlet);
        Contract.Outputs(cmdlet, "GeoDrive.Api.RecallJobInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Get-CloudRecallJob -Drive finance", "GetCloudRecallJobCommand");

    [Fact]
    public void A_drive_from_Get_CloudDrive_on_the_pipeline_is_asked_for_its_jobs()
    {
        // What Get-CloudDrive writes: a GeoDrive.Api.DriveInfo, whose Name is the drive's.
        var error = Session.InvokeExpectingError("[GeoDrive.Api.DriveInfo]@{ Name = 'finance'; CachePath = '/c'; MountPath = '/m'; Endpoint = 'http://x'; Bucket = 'b' } | Get-CloudRecallJob -Name *prewarm*");
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.GetCloudRecallJobCommand", error.FullyQualifiedErrorId);
        // The literal drive name was used as is (no wildcard lookup first): the request was for finance's jobs.
        Assert.Equal("finance", error.TargetObject?.ToString());
    }
}
