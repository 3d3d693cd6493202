using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class RestoreCloudFileTests(ModuleSession session) : CmdletTests(session)
{
    /// <summary>$versions: what Get-CloudFileVersion writes for a file deleted after two writes, newest first.</summary>
    private const string Versions = """
        $versions = @(
            [GeoDrive.Api.CloudFileVersionInfo]@{ Drive = 'finance'; Path = 'budget.xlsx'; VersionId = 'marker'; IsLatest = $true; IsDeleteMarker = $true }
            [GeoDrive.Api.CloudFileVersionInfo]@{ Drive = 'finance'; Path = 'budget.xlsx'; VersionId = 'second'; Size = 20 }
            [GeoDrive.Api.CloudFileVersionInfo]@{ Drive = 'finance'; Path = 'budget.xlsx'; VersionId = 'first'; Size = 10 }
        )

        """;

    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Restore-CloudFile");
        Contract.Parameters(cmdlet, "Drive", "Path", "VersionId", "Deleted", "PassThru", "InputObject");
        Contract.Mandatory(cmdlet, "Drive", true);
        Contract.ByPropertyName(cmdlet, "Drive");
        Contract.Alias(cmdlet, "Drive", "Name");
        Contract.CompletesDriveNames(cmdlet, "Drive");
        Contract.Mandatory(cmdlet, "Path", true);
        Contract.ByPropertyName(cmdlet, "Path");
        Assert.Equal(0, Contract.Parameter(cmdlet, "Path").Position);
        Contract.Type(cmdlet, "Path", typeof(string));
        // Two sets: a version by its id, or a deleted file (optionally from a named version).
        Assert.Equal("VersionId", cmdlet.DefaultParameterSet);
        Contract.Mandatory(cmdlet, "VersionId", true, "VersionId");
        Contract.ByPropertyName(cmdlet, "VersionId", "VersionId");
        Contract.Mandatory(cmdlet, "Deleted", true, "Deleted");
        Contract.Mandatory(cmdlet, "VersionId", false, "Deleted");
        Contract.ByPropertyName(cmdlet, "VersionId", "Deleted");
        Contract.Type(cmdlet, "Deleted", typeof(SwitchParameter));
        Contract.Type(cmdlet, "PassThru", typeof(SwitchParameter));
        Assert.True(Contract.Parameter(cmdlet, "InputObject").ValueFromPipeline);
        Assert.Equal("GeoDrive.Api.CloudFileVersionInfo", cmdlet.Parameters["InputObject"].ParameterType.FullName);
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.CloudFileInfo");
    }

    [Theory]
    [InlineData("-VersionId first")]
    [InlineData("-Deleted")]
    [InlineData("-Deleted -VersionId first")]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it(string how) =>
        AssertServiceNotRunning($"Restore-CloudFile -Drive finance -Path budget.xlsx {how}", "RestoreCloudFileCommand");

    [Theory]
    [InlineData("-VersionId first")]
    [InlineData("-Deleted")]
    [InlineData("-Deleted -VersionId first -PassThru")]
    public void WhatIf_sends_nothing(string how) =>
        AssertNothingFailed($"Restore-CloudFile -Drive finance -Path budget.xlsx {how} -WhatIf");

    [Fact]
    public void Neither_VersionId_nor_Deleted_is_a_missing_parameter_not_a_request()
    {
        var error = Session.InvokeExpectingError("Restore-CloudFile -Drive finance -Path budget.xlsx");
        Assert.StartsWith("MissingMandatoryParameter", error.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Contains("VersionId", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_version_from_Get_CloudFileVersion_binds_Drive_Path_and_VersionId()
    {
        // As `Get-CloudFileVersion ... | Select-Object -Skip 2 -First 1 | Restore-CloudFile` (no Select-Object in this runspace).
        var error = Session.InvokeExpectingError(Versions + "$versions[2] | Restore-CloudFile -Verbose");

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.RestoreCloudFileCommand", error.FullyQualifiedErrorId);
        var announced = Assert.Single(Session.LastVerbose).Message;
        Assert.Contains("Restore version first", announced, StringComparison.Ordinal);
        Assert.Contains("budget.xlsx on drive finance", announced, StringComparison.Ordinal);
    }

    [Fact]
    public void Any_object_with_Drive_Path_and_VersionId_binds_by_property_name() =>
        AssertServiceNotRunning("[pscustomobject]@{ Drive = 'finance'; Path = 'budget.xlsx'; VersionId = 'first' } | Restore-CloudFile", "RestoreCloudFileCommand");

    [Fact]
    public void A_version_on_the_pipeline_with_Deleted_restores_the_deleted_file_from_it()
    {
        var error = Session.InvokeExpectingError(Versions + "$versions[1] | Restore-CloudFile -Deleted -Verbose");

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.RestoreCloudFileCommand", error.FullyQualifiedErrorId);
        Assert.Contains("Restore the deleted file from version second", Assert.Single(Session.LastVerbose).Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("-WhatIf")]
    [InlineData("-Deleted")]
    public void A_delete_marker_from_the_pipeline_is_refused_before_any_request(string switches)
    {
        var error = Session.InvokeExpectingError(Versions + $"$versions[0] | Restore-CloudFile {switches}");

        Assert.Equal("VersionNotFound,GeoDrive.Commands.RestoreCloudFileCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.InvalidArgument, error.CategoryInfo.Category);
        Assert.Contains("delete marker", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("Restore-CloudFile -Drive finance -Path budget.xlsx -Deleted", error.ErrorDetails.RecommendedAction, StringComparison.Ordinal);
        // Refused, not sent: the stopped service was never asked.
        Assert.DoesNotContain(Session.LastErrors, e => e.FullyQualifiedErrorId.StartsWith("ServiceNotRunning", StringComparison.Ordinal));
    }

    [Fact]
    public void A_delete_marker_does_not_stop_the_versions_after_it()
    {
        Session.Invoke(Versions + "$versions | Restore-CloudFile -Verbose");

        // The marker: a non-terminating refusal; the next version went on to the (stopped) service, which ends the command.
        Assert.Equal(
            ["VersionNotFound,GeoDrive.Commands.RestoreCloudFileCommand", "ServiceNotRunning,GeoDrive.Commands.RestoreCloudFileCommand"],
            Session.LastErrors.Select(e => e.FullyQualifiedErrorId));
        Assert.Contains("Restore version second", Assert.Single(Session.LastVerbose).Message, StringComparison.Ordinal);
    }
}
