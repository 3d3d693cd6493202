using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Set-CloudDrive on a running drive: policy files in force at once, a refused change changes nothing, an endpoint change restarts the store.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class SetCloudDriveScenarioTests(S3ServerFixture s3) : ServiceTests
{
    [Fact]
    public async Task New_policy_files_are_in_force_when_Set_CloudDrive_returns_and_a_bad_one_is_refused_whole()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var strict = Path.Combine(d.Root, "strict.yaml");
        await File.WriteAllTextAsync(strict, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.skip" ]"""));
        var variables = d.Variables();
        variables["strict"] = strict;

        Assert.Empty(Ps.Invoke("Set-CloudDrive -Name $name -PolicyPath $strict -WhatIf", variables));
        Assert.Equal([d.PolicyPath], (string[])Ps.Invoke("Get-CloudDrive -Name $name", variables).Single().Properties["PolicyPaths"].Value);

        var drive = Ps.Invoke("Get-CloudDrive -Name $name | Set-CloudDrive -PolicyPath $policy, $strict -PassThru", variables).Single();
        Assert.Empty(Ps.LastErrors);
        Assert.Equal([d.PolicyPath, strict], (string[])drive.Properties["PolicyPaths"].Value);
        await File.WriteAllTextAsync(d.Mounted("at-once.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "at-once.skip"));

        // The same files again: nothing changes, not even an event.
        var events = PolicyEvents(d);
        var definitions = File.ReadAllText(Path.Combine(Service.HomePath, "drives.json"));
        Ps.Invoke("Set-CloudDrive -Name $name -PolicyPath $policy, $strict", variables);
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(definitions, File.ReadAllText(Path.Combine(Service.HomePath, "drives.json")));
        Assert.Equal(events, PolicyEvents(d));

        var bad = Path.Combine(d.Root, "bad.yaml");
        await File.WriteAllTextAsync(bad, DriveScenario.Policy().Replace("accessWait", "acessWait", StringComparison.Ordinal));
        variables["bad"] = bad;
        var error = Ps.InvokeExpectingError("Set-CloudDrive -Name $name -PolicyPath $bad", variables);
        Assert.Equal("PolicyUnknownKey,GeoDrive.Commands.SetCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains("bad.yaml:5:", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("accessWait", error.Exception.Message, StringComparison.Ordinal);
        Assert.Equal([d.PolicyPath, strict], (string[])Ps.Invoke("(Get-CloudDrive -Name $name).PolicyPaths", variables).Select(o => o.BaseObject).Cast<string>().ToArray());
        await File.WriteAllTextAsync(d.Mounted("still.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "still.skip"));

        var missing = Ps.InvokeExpectingError("Set-CloudDrive -Name nosuchdrive -PolicyPath $policy", variables);
        Assert.Equal("DriveNotFound,GeoDrive.Commands.SetCloudDriveCommand", missing.FullyQualifiedErrorId);
    }

    [Fact]
    public async Task A_new_endpoint_is_tried_first_then_the_drive_restarts_on_it_and_keeps_serving_its_files()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("before.txt"), "written before");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "before.txt") == "Cached", "before.txt Cached");
        var variables = d.Variables();

        var unreachable = Ps.InvokeExpectingError("Set-CloudDrive -Name $name -Endpoint http://127.0.0.1:1", variables);
        Assert.Equal("EndpointUnreachable,GeoDrive.Commands.SetCloudDriveCommand", unreachable.FullyQualifiedErrorId);
        Assert.Equal(s3.Endpoint.TrimEnd('/'), Ps.Invoke("(Get-CloudDrive -Name $name).Endpoint", variables).Single().ToString());

        // The same server under another name, plus the old URL: a different endpoint list, so the store restarts on it.
        variables["other"] = s3.Endpoint.Replace("127.0.0.1", "localhost", StringComparison.Ordinal);
        var drive = Ps.Invoke("Set-CloudDrive -Name $name -Endpoint $other, $endpoint -PassThru", variables).Single();
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(((string)variables["other"]!).TrimEnd('/'), drive.Properties["Endpoint"].Value);
        Assert.Equal([((string)variables["other"]!).TrimEnd('/'), s3.Endpoint.TrimEnd('/')], ((IEnumerable<string>)drive.Properties["Endpoints"].Value).ToArray());
        Assert.True((bool)drive.Properties["Mounted"].Value);
        Assert.Contains(PolicyEvents(d), m => m.StartsWith("Store restarted (Set-CloudDrive)", StringComparison.Ordinal));

        Assert.Equal("written before", await File.ReadAllTextAsync(d.Mounted("before.txt")));
        await File.WriteAllTextAsync(d.Mounted("after.txt"), "written after");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "after.txt") == "Cached", "after.txt Cached");
        Assert.Equal("written after"u8.ToArray(), await d.ObjectBytesAsync("after.txt"));

        // The restart is remembered: a service restart brings the drive back on the new endpoint.
        await RestartServiceAsync();
        Assert.Equal(((string)variables["other"]!).TrimEnd('/'), Ps.Invoke("(Get-CloudDrive -Name $name).Endpoint", variables).Single().ToString());
    }
}

/// <summary>A rejected credential needs a server that checks signatures: Ceph's RADOS Gateway.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class SetCloudDriveCredentialTests(CephS3Fixture ceph) : ServiceTests, IClassFixture<CephS3Fixture>
{
    [Fact]
    public async Task A_wrong_secret_is_refused_before_anything_changes_and_is_never_echoed()
    {
        using var d = new DriveScenario(ceph, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        var credentialFile = Path.Combine(Service.HomePath, "credentials", d.Name + ".json");
        var stored = await File.ReadAllTextAsync(credentialFile);
        const string wrongSecret = "Wr0ngSecret-set-do-not-print-me";

        var error = Ps.InvokeExpectingError(
            "$c = [pscredential]::new($ak, [System.Net.NetworkCredential]::new('', $wrong).SecurePassword); Set-CloudDrive -Name $name -Credential $c",
            new Dictionary<string, object?>(d.Variables()) { ["wrong"] = wrongSecret });

        Assert.Equal("CredentialsRejected,GeoDrive.Commands.SetCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Equal(stored, await File.ReadAllTextAsync(credentialFile));
        Assert.DoesNotContain(wrongSecret, error.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(wrongSecret, Service.ReadLog(), StringComparison.Ordinal);
        await File.WriteAllTextAsync(d.Mounted("still.txt"), "signed with the old key");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "still.txt") == "Cached", "still.txt Cached");

        // The right key again (as a credential rotation re-applies it): the same values change nothing, so the store
        // is not restarted. (Counted in the drive's event log, written before the cmdlet returns: the service's
        // console log reaches the test a moment later, through a queue and a pipe.)
        var restarts = PolicyEvents(d).Count(m => m.StartsWith("Store restarted (Set-CloudDrive)", StringComparison.Ordinal));
        Ps.Invoke("$c = [pscredential]::new($ak, [System.Net.NetworkCredential]::new('', $sk).SecurePassword); Set-CloudDrive -Name $name -Credential $c", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(restarts, PolicyEvents(d).Count(m => m.StartsWith("Store restarted (Set-CloudDrive)", StringComparison.Ordinal)));
    }
}
