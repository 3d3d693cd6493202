using System.Diagnostics;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// New-CloudDrive's two ways to authenticate, against a server that checks signatures (Ceph RGW):
/// -Credential (kept only in the service's root-only store) and -ProfileName (an AWS profile read at start).
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class CredentialStoreTests(CephS3Fixture ceph) : ServiceTests, IClassFixture<CephS3Fixture>
{
    private const string NewProfileDrive = "New-CloudDrive -Name $name -CachePath $cache -MountPath $mnt -Endpoint $endpoint -Bucket $bucket -PolicyPath $policy -ProfileName $profile -ProfileLocation $profileFile";

    private Dictionary<string, object?> ProfileVariables(DriveScenario d, string profile)
    {
        var file = Path.Combine(d.Root, "aws-credentials");
        File.WriteAllText(file, $"""
            [other]
            aws_access_key_id = nobody
            aws_secret_access_key = nothing

            [geodrive-test]
            aws_access_key_id = {ceph.AccessKey}
            aws_secret_access_key = {ceph.SecretKey}
            """);
        var variables = d.Variables();
        variables["profile"] = profile;
        variables["profileFile"] = file;
        return variables;
    }

    private static int Owner(string path)
    {
        using var stat = Process.Start(new ProcessStartInfo("stat", ["-c", "%u", path]) { RedirectStandardOutput = true })!;
        var output = stat.StandardOutput.ReadToEnd();
        stat.WaitForExit();
        return int.Parse(output.Trim(), System.Globalization.CultureInfo.InvariantCulture);
    }

    [Fact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void A_credential_is_kept_in_a_root_only_file_of_the_service_and_shown_only_as_its_kind_and_a_masked_key()
    {
        using var d = new DriveScenario(ceph, DriveScenario.Policy());
        var drive = Ps.Invoke(DriveScenario.NewDriveScript, d.Variables()).Single();
        Assert.Empty(Ps.LastErrors);

        var store = Path.Combine(Service.HomePath, "credentials", d.Name + ".json");
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(store));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.GetDirectoryName(store)!));
        Assert.Equal(Environment.IsPrivilegedProcess ? 0 : Owner(Service.HomePath), Owner(store));
        Assert.Contains(ceph.SecretKey, File.ReadAllText(store), StringComparison.Ordinal);
        Assert.DoesNotContain(ceph.SecretKey, File.ReadAllText(Path.Combine(Service.HomePath, "drives.json")), StringComparison.Ordinal);

        Assert.Equal("Credential", drive.Properties["CredentialKind"].Value);
        Assert.DoesNotContain(ceph.AccessKey, (string)drive.Properties["AccessKeyId"].Value, StringComparison.Ordinal);

        // Removing the drive removes its secret.
        Ps.Invoke("Remove-CloudDrive -Name $name -Force", d.Variables());
        Assert.False(File.Exists(store));
    }

    [Fact]
    public async Task A_drive_authenticated_by_an_AWS_profile_uploads_stubs_and_recalls_and_survives_a_restart()
    {
        using var d = new DriveScenario(ceph, DriveScenario.Policy(settle: "0s"));
        var variables = ProfileVariables(d, "geodrive-test");

        var drive = Ps.Invoke(NewProfileDrive, variables).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(("Profile", "geodrive-test"), ((string)drive.Properties["CredentialKind"].Value, (string)drive.Properties["ProfileName"].Value));
        Assert.False(File.Exists(Path.Combine(Service.HomePath, "credentials", d.Name + ".json")), "a profile drive keeps no secret of its own");
        await File.WriteAllTextAsync(d.Mounted("profiled.txt"), "signed with the profile's keys");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "profiled.txt") == "Cached", "profiled.txt Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path profiled.txt -Confirm:$false", variables);
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("profiled.txt")));

        await RestartServiceAsync();

        Assert.Null(Ps.Invoke("(Get-CloudDrive -Name $name).LastError", variables).Single());
        Assert.Equal("signed with the profile's keys", await File.ReadAllTextAsync(d.Mounted("profiled.txt")));
        Assert.Equal("Cached", StateOf(d, "profiled.txt"));
        Assert.DoesNotContain(ceph.SecretKey, Service.ReadLog(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_profile_that_does_not_exist_is_refused_with_its_id_and_a_remedy()
    {
        using var d = new DriveScenario(ceph, DriveScenario.Policy());
        var variables = ProfileVariables(d, "no-such-profile");

        var error = Ps.InvokeExpectingError(NewProfileDrive, variables);

        Assert.Equal("CredentialProfileNotFound,GeoDrive.Commands.NewCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains("no-such-profile", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("aws configure --profile no-such-profile", error.Exception.Message, StringComparison.Ordinal);
        Assert.Empty(Ps.Invoke("Get-CloudDrive"));
    }
}
