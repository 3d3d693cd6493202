using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class NewCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    private const string NewDrive = Credential + "New-CloudDrive -Name d1 -CachePath ./cache -MountPath mnt -Endpoint http://127.0.0.1:9 -Bucket b -Credential $cred";

    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("New-CloudDrive");
        Contract.Parameters(cmdlet, "Name", "CachePath", "MountPath", "Endpoint", "Bucket", "Prefix", "Credential", "ProfileName", "ProfileLocation", "PolicyPath", "Region", "NoMount", "IncludeCacheInBackup", "CaseInsensitive", "Peer", "PeerListen", "PeerKey");
        foreach (var mandatory in new[] { "Name", "CachePath", "Endpoint", "Bucket" })
        {
            Contract.Mandatory(cmdlet, mandatory, true);
        }
        // -Credential or an AWS profile: two parameter sets.
        Contract.Mandatory(cmdlet, "Credential", true, "Credential");
        Contract.Mandatory(cmdlet, "ProfileName", true, "Profile");
        Contract.Mandatory(cmdlet, "ProfileLocation", false, "Profile");
        Assert.Equal("Credential", cmdlet.DefaultParameterSet);
        // MountPath is required by a Linux service (FUSE) and left out on Windows (ProjFS serves the cache in place).
        foreach (var optional in new[] { "MountPath", "Prefix", "PolicyPath", "Region", "NoMount", "IncludeCacheInBackup", "CaseInsensitive", "Peer", "PeerListen", "PeerKey" })
        {
            Contract.Mandatory(cmdlet, optional, false);
        }
        Contract.Type(cmdlet, "Credential", typeof(PSCredential));
        Contract.Type(cmdlet, "Endpoint", typeof(string[]));
        Contract.Type(cmdlet, "PolicyPath", typeof(string[]));
        Contract.Type(cmdlet, "NoMount", typeof(SwitchParameter));
        Contract.Type(cmdlet, "IncludeCacheInBackup", typeof(SwitchParameter));
        // A switch, and left out means the platform's default: -CaseInsensitive:$false is a case-sensitive drive on Windows.
        Contract.Type(cmdlet, "CaseInsensitive", typeof(SwitchParameter));
        Contract.Type(cmdlet, "Peer", typeof(string[]));
        Contract.Type(cmdlet, "PeerListen", typeof(string));
        Contract.Type(cmdlet, "PeerKey", typeof(System.Security.SecureString));
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning(NewDrive, "NewCloudDriveCommand");

    [Fact]
    public void A_refusal_is_terminating_so_try_catch_sees_it_whatever_the_ErrorAction()
    {
        var output = Session.Invoke($"try {{ {NewDrive.Replace("\n", "; ", StringComparison.Ordinal)} -ErrorAction Continue; 'not reached' }} catch {{ $_.FullyQualifiedErrorId }}");
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.NewCloudDriveCommand", Assert.Single(output).ToString());
    }

    [Fact]
    public void WhatIf_sends_nothing_so_a_stopped_service_is_no_error()
    {
        var output = Session.Invoke(NewDrive + " -WhatIf");
        Assert.Empty(Session.LastErrors);
        Assert.Empty(output);
    }

    [Fact]
    public void Relative_cache_and_mount_paths_are_resolved_against_the_current_location()
    {
        var where = Directory.CreateDirectory(Path.Combine(Session.Scratch, "here")).FullName;
        // Set-Location is not among the core cmdlets; the engine API is.
        var error = Session.InvokeExpectingError($$"""
            $before = $ExecutionContext.SessionState.Path.CurrentLocation
            $null = $ExecutionContext.SessionState.Path.SetLocation('{{where}}')
            try { {{NewDrive}} -Confirm:$false -Verbose } finally { $null = $ExecutionContext.SessionState.Path.SetLocation($before) }
            """);
        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.NewCloudDriveCommand", error.FullyQualifiedErrorId);

        var announced = Assert.Single(Session.LastVerbose).Message;
        Assert.Contains($"cache {Path.Combine(where, "cache")}", announced, StringComparison.Ordinal);
        Assert.Contains($"mount {Path.Combine(where, "mnt")}", announced, StringComparison.Ordinal);
    }

    [Fact]
    public void An_empty_PolicyPath_is_allowed_as_a_script_passes_an_unset_parameter()
    {
        var output = Session.Invoke(NewDrive + " -PolicyPath '' -WhatIf");
        Assert.Empty(Session.LastErrors);
        Assert.Empty(output);
    }

    [Fact]
    public void Credential_and_ProfileName_cannot_be_given_together()
    {
        var error = Session.InvokeExpectingError(NewDrive + " -ProfileName backup -WhatIf");
        Assert.Equal("AmbiguousParameterSet,GeoDrive.Commands.NewCloudDriveCommand", error.FullyQualifiedErrorId);
    }

    [Fact]
    public void A_profile_drive_goes_to_the_service_without_a_credential() =>
        AssertServiceNotRunning("New-CloudDrive -Name d1 -CachePath ./cache -MountPath mnt -Endpoint http://127.0.0.1:9 -Bucket b -ProfileName backup -ProfileLocation ./credentials", "NewCloudDriveCommand");

    [Fact]
    public void Several_endpoints_bind_to_Endpoint() =>
        AssertServiceNotRunning(Credential + "New-CloudDrive -Name d1 -CachePath ./cache -MountPath mnt -Endpoint http://127.0.0.1:9, http://127.0.0.1:10 -Bucket b -Credential $cred", "NewCloudDriveCommand");
}
