using System.Management.Automation;

namespace GeoDrive.Module.Tests;

/// <summary>
/// Set-CloudDrive without a service: its contract, -WhatIf, its refusals. What it does to a running
/// drive (policy in force at once, endpoint restart, a second run changing nothing) is tested against
/// the real service in GeoDrive.EndToEnd.Tests (SetCloudDriveScenarioTests, DscTests).
/// </summary>
public sealed class SetCloudDriveTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Set-CloudDrive");
        Contract.Parameters(cmdlet, "Name", "PolicyPath", "Endpoint", "Credential", "CaseInsensitive", "Peer", "PeerListen", "PeerKey", "PassThru");
        Contract.Mandatory(cmdlet, "Name", true);
        Contract.ByPropertyName(cmdlet, "Name");
        Contract.Wildcards(cmdlet, "Name");
        Contract.CompletesDriveNames(cmdlet, "Name");
        Contract.Type(cmdlet, "Name", typeof(string[]));
        Contract.Type(cmdlet, "PolicyPath", typeof(string[]));
        Contract.Type(cmdlet, "Endpoint", typeof(string[]));
        Contract.Type(cmdlet, "Credential", typeof(PSCredential));
        Contract.Type(cmdlet, "PassThru", typeof(SwitchParameter));
        Contract.Type(cmdlet, "CaseInsensitive", typeof(SwitchParameter));
        Contract.Type(cmdlet, "Peer", typeof(string[]));
        Contract.Type(cmdlet, "PeerListen", typeof(string));
        Contract.Type(cmdlet, "PeerKey", typeof(System.Security.SecureString));
        Contract.Mandatory(cmdlet, "PolicyPath", false);
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Medium);
        Contract.Outputs(cmdlet, "GeoDrive.Api.DriveInfo");
    }

    [Fact]
    public void Without_a_service_it_fails_with_ServiceNotRunning_and_says_how_to_start_it() =>
        AssertServiceNotRunning("Set-CloudDrive -Name finance -PolicyPath /etc/geodrive/finance.yaml", "SetCloudDriveCommand");

    [Fact]
    public void WhatIf_sends_nothing() =>
        AssertNothingFailed(Credential + "Set-CloudDrive -Name finance -PolicyPath ./a.yaml -Endpoint http://127.0.0.1:9000 -Credential $cred -WhatIf");

    [Fact]
    public void WhatIf_with_peers_sends_nothing() =>
        AssertNothingFailed("""
            $key = [System.Net.NetworkCredential]::new('', 'a-peer-key-of-the-test-0123456789').SecurePassword
            Set-CloudDrive -Name finance -Peer http://site-b:7701 -PeerListen 0.0.0.0:7701 -PeerKey $key -WhatIf
            """);

    [Fact]
    public void Nothing_to_change_is_refused_with_InvalidRequest_before_the_service_is_asked()
    {
        var error = Session.InvokeExpectingError("Set-CloudDrive -Name finance");

        Assert.Equal("InvalidRequest,GeoDrive.Commands.SetCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.InvalidArgument, error.CategoryInfo.Category);
        Assert.Contains("-PolicyPath, -Endpoint, -Credential, -Peer, -PeerListen or -PeerKey", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Drives_from_the_pipeline_bind_by_their_Name_property()
    {
        // Get-CloudDrive's objects carry Name; each reaches the service in turn (which is down here).
        var error = Session.InvokeExpectingError(
            "[pscustomobject]@{ Name = 'scans'; Bucket = 'b' }, [pscustomobject]@{ Name = 'media' } | Set-CloudDrive -PolicyPath /p.yaml");

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.SetCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Equal("scans", error.TargetObject);
    }
}

/// <summary>The class-based DSC resource CloudDrive, as PowerShell loads it from the module (no service).</summary>
public sealed class CloudDriveDscResourceTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void The_module_exports_the_class_based_resource_CloudDrive()
    {
        var exported = Session.Invoke("(Get-Module GeoDrive).ExportedDscResources").Select(o => o.ToString()).ToList();

        Assert.Equal(["CloudDrive"], exported);
    }

    [Fact]
    public void CloudDrive_is_a_DscResource_with_Name_as_its_key_and_Get_Test_Set()
    {
        var type = (Type)Session.Invoke("& (Get-Module GeoDrive).NestedModules.Where({ $_.Name -eq 'CloudDriveDsc' })[0] { [CloudDrive] }").Single().BaseObject;

        Assert.Contains(type.GetCustomAttributes(true), a => a is DscResourceAttribute);
        var keys = type.GetProperties().Where(p => p.GetCustomAttributes(true).OfType<DscPropertyAttribute>().Any(d => d.Key)).Select(p => p.Name);
        Assert.Equal(["Name"], keys);
        foreach (var property in new[] { "Ensure", "CachePath", "MountPath", "Endpoint", "Bucket", "PolicyPath", "Credential", "RemoveCache", "CaseInsensitive", "Peer", "PeerListen", "PeerKey" })
        {
            Assert.Contains(type.GetProperty(property)!.GetCustomAttributes(true), a => a is DscPropertyAttribute { Key: false, NotConfigurable: false });
        }
        Assert.Equal(typeof(PSCredential), type.GetProperty("Credential")!.PropertyType);
        Assert.Equal(typeof(PSCredential), type.GetProperty("PeerKey")!.PropertyType);   // a secret, as PSDSC carries them
        Assert.Equal(typeof(bool?), type.GetProperty("CaseInsensitive")!.PropertyType);   // not given: the platform's default
        Assert.Contains(type.GetProperty("PeerKeySet")!.GetCustomAttributes(true), a => a is DscPropertyAttribute { NotConfigurable: true });
        Assert.NotNull(type.GetMethod("Get"));
        Assert.Equal(typeof(bool), type.GetMethod("Test")!.ReturnType);
        Assert.NotNull(type.GetMethod("Set"));
    }

    [Fact]
    public void Get_without_a_service_fails_with_ServiceNotRunning_rather_than_reporting_the_drive_absent()
    {
        var error = Session.InvokeExpectingError("""
            & (Get-Module GeoDrive).NestedModules.Where({ $_.Name -eq 'CloudDriveDsc' })[0] {
                $r = [CloudDrive]::new(); $r.Name = 'finance'; $r.Get()
            }
            """);

        Assert.StartsWith("ServiceNotRunning,", error.FullyQualifiedErrorId, StringComparison.Ordinal);
    }
}
