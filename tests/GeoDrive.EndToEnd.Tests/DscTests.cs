using System.Text.Json.Nodes;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The DSC resource CloudDrive against the real service and S3 server: the class-based resource as
/// PSDSC/Invoke-DscResource drive it, the DSC v3 manifest's commands with JSON on stdin, and the
/// samples in samples/dsc/.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class DscTests(S3ServerFixture s3) : ServiceTests
{
    /// <summary>$r: a CloudDrive resource for the scenario's drive, built as a configuration would.</summary>
    private const string Resource = """
        $dsc = (Get-Module GeoDrive).NestedModules.Where({ $_.Name -eq 'CloudDriveDsc' })[0]
        $r = & $dsc { [CloudDrive]::new() }
        $r.Name = $name; $r.CachePath = $cache; $r.MountPath = $mnt; $r.Endpoint = $endpoint; $r.Bucket = $bucket
        $r.PolicyPath = $policy
        $r.Credential = [pscredential]::new($ak, [System.Net.NetworkCredential]::new('', $sk).SecurePassword)
        """;

    private string DrivesJson => File.ReadAllText(Path.Combine(Service.HomePath, "drives.json"));

    private int LogLines => Service.ReadLog().Split('\n').Length;

    private bool Test(DriveScenario d, string extra = "") => (bool)Ps.Invoke(Resource + extra + "\n$r.Test()", d.Variables()).Single().BaseObject;

    private void Set(DriveScenario d, string extra = "")
    {
        Ps.Invoke(Resource + extra + "\n$r.Set()", d.Variables());
        Assert.Empty(Ps.LastErrors);
    }

    [Fact]
    public async Task Test_is_false_then_Set_creates_the_drive_then_Test_is_true_and_a_second_Set_changes_nothing()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Directory.Delete(d.MountPath);   // the resource creates a missing mount folder

        Assert.False(Test(d));
        Set(d);
        Assert.True(Test(d));

        var drive = Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()).Single();
        Assert.True((bool)drive.Properties["Mounted"].Value);
        Assert.Equal([d.PolicyPath], (string[])drive.Properties["PolicyPaths"].Value);
        await File.WriteAllTextAsync(d.Mounted("a.txt"), "declared");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "a.txt") == "Cached", "a.txt Cached");
        // An upload writes no line at the default level (ADR 0035), so none can land after the count below.

        var definitions = DrivesJson;
        var credentialFile = Path.Combine(Service.HomePath, "credentials", d.Name + ".json");
        var credentialWritten = File.GetLastWriteTimeUtc(credentialFile);
        var logLines = LogLines;
        var policyEvents = PolicyEvents(d);
        var got = Ps.Invoke(Resource + "\n$r.Get()", d.Variables()).Single();

        Set(d);

        Assert.Equal(definitions, DrivesJson);
        Assert.Equal(credentialWritten, File.GetLastWriteTimeUtc(credentialFile));
        Assert.Equal(policyEvents, PolicyEvents(d));   // no policy event, no restart ...
        Assert.Equal(logLines, LogLines);   // ... no creation: the service heard nothing
        Assert.True(Test(d));
        Assert.Equal("Cached", StateOf(d, "a.txt"));
        Assert.Null(got.Properties["Credential"].Value);   // Get() never returns the secret
        Assert.Equal(MaskedKeyId(s3.AccessKey), got.Properties["AccessKeyId"].Value);
        Assert.DoesNotContain(s3.SecretKey, Service.ReadLog(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_changed_PolicyPath_makes_Test_false_and_Set_puts_the_new_policy_in_force_at_once()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Set(d);
        var strict = Path.Combine(d.Root, "strict.yaml");
        await File.WriteAllTextAsync(strict, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.skip" ]"""));
        var change = "\n$r.PolicyPath = @($strict)";
        var variables = d.Variables();
        variables["strict"] = strict;

        Assert.False((bool)Ps.Invoke(Resource + change + "\n$r.Test()", variables).Single().BaseObject);
        Ps.Invoke(Resource + change + "\n$r.Set()", variables);
        Assert.Empty(Ps.LastErrors);
        Assert.True((bool)Ps.Invoke(Resource + change + "\n$r.Test()", variables).Single().BaseObject);

        await File.WriteAllTextAsync(d.Mounted("now.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "now.skip"));
        Assert.Contains(PolicyEvents(d), m => m.Contains("(Set-CloudDrive)", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Ensure_Absent_removes_the_drive_and_keeps_the_cache_unless_RemoveCache_is_set()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Set(d);
        await File.WriteAllTextAsync(d.Mounted("kept.txt"), "still here");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "kept.txt") == "Cached", "kept.txt Cached");
        const string absent = "\n$r.Ensure = 'Absent'";

        Assert.False(Test(d, absent));
        Set(d, absent);
        Assert.True(Test(d, absent));

        var error = Ps.InvokeExpectingError("Get-CloudDrive -Name $name", d.Variables());
        Assert.StartsWith("DriveNotFound,", error.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Equal("still here", await File.ReadAllTextAsync(d.Cached("kept.txt")));
        Assert.Equal("still here"u8.ToArray(), await d.ObjectBytesAsync("kept.txt"));

        // The drive is gone: nothing can verify its leftover cache any more, so RemoveCache refuses to delete a file of it.
        const string removeCache = absent + "\n$r.RemoveCache = $true";
        Assert.False(Test(d, removeCache));   // the cache folder is still there
        var unverified = Ps.InvokeExpectingError(Resource + removeCache + "\n$r.Set()", d.Variables());
        Assert.True(unverified.FullyQualifiedErrorId.StartsWith("CacheNotVerified", StringComparison.Ordinal), unverified.Exception.Message);
        Assert.Contains("kept.txt", unverified.Exception.Message, StringComparison.Ordinal);
        Assert.Equal("still here", await File.ReadAllTextAsync(d.Cached("kept.txt")));
        Assert.Equal("still here"u8.ToArray(), await d.ObjectBytesAsync("kept.txt"));   // the bucket is never touched
    }

    [Fact]
    public async Task Ensure_Absent_with_RemoveCache_in_one_step_removes_the_drive_and_its_verified_cache()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Set(d);
        await File.WriteAllTextAsync(d.Mounted("kept.txt"), "in the bucket");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "kept.txt") == "Cached", "kept.txt Cached");
        const string removeCache = "\n$r.Ensure = 'Absent'\n$r.RemoveCache = $true";

        Set(d, removeCache);

        Assert.True(Test(d, removeCache));
        Assert.False(Directory.Exists(d.CachePath));
        Assert.Equal("in the bucket"u8.ToArray(), await d.ObjectBytesAsync("kept.txt"));
    }

    [Fact]
    public async Task The_v3_manifest_get_test_and_set_take_JSON_on_stdin_and_report_exist_and_inDesiredState()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var dsc = new DscRunner(Service.SocketPath, d.Root);
        var desired = new JsonObject
        {
            ["name"] = d.Name,
            ["cachePath"] = d.CachePath,
            ["mountPath"] = d.MountPath,
            ["endpoint"] = s3.Endpoint,
            ["bucket"] = d.Bucket,
            ["policyPath"] = new JsonArray(d.PolicyPath),
            ["credential"] = new JsonObject { ["username"] = s3.AccessKey, ["password"] = s3.SecretKey },
        };

        var get = dsc.Invoke("get", new JsonObject { ["name"] = d.Name });
        Assert.True(get.ExitCode == 0, get.Errors);
        Assert.False((bool)get.Json["_exist"]!);

        var test = dsc.Invoke("test", desired);
        Assert.True(test.ExitCode == 0, test.Errors);
        Assert.False((bool)test.Json["_inDesiredState"]!);

        var set = dsc.Invoke("set", desired);
        Assert.True(set.ExitCode == 0, set.Errors);
        Assert.True((bool)set.Json["_exist"]!);
        Assert.Equal(d.Bucket, (string)set.Json["bucket"]!);
        Assert.Equal(MaskedKeyId(s3.AccessKey), (string)set.Json["accessKeyId"]!);

        var definitions = DrivesJson;
        test = dsc.Invoke("test", desired);
        Assert.True((bool)test.Json["_inDesiredState"]!, test.Output + test.Errors);
        set = dsc.Invoke("set", desired);   // a second set changes nothing
        Assert.True(set.ExitCode == 0, set.Errors);
        Assert.Equal(definitions, DrivesJson);

        await File.WriteAllTextAsync(d.Mounted("k.txt"), "kept");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "k.txt") == "Cached", "k.txt Cached");
        var absent = new JsonObject { ["name"] = d.Name, ["_exist"] = false };
        Assert.False((bool)dsc.Invoke("test", absent).Json["_inDesiredState"]!);
        set = dsc.Invoke("set", absent);
        Assert.True(set.ExitCode == 0, set.Errors);
        Assert.False((bool)set.Json["_exist"]!);
        Assert.Equal("kept", await File.ReadAllTextAsync(d.Cached("k.txt")));

        foreach (var output in new[] { get, test, set })
        {
            Assert.DoesNotContain(s3.SecretKey, output.Output + output.Errors, StringComparison.Ordinal);
        }
        var bad = dsc.Invoke("get", new JsonObject { ["cachePath"] = "/x" });
        Assert.NotEqual(0, bad.ExitCode);
        Assert.Contains("'name'", bad.Errors, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_samples_create_a_drive_then_the_v3_document_sets_its_policy()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var dsc = new DscRunner(Service.SocketPath, d.Root);
        var secrets = new Dictionary<string, string> { ["GEODRIVE_ACCESS_KEY"] = s3.AccessKey, ["GEODRIVE_SECRET_KEY"] = s3.SecretKey };
        string[] args = ["-Name", d.Name, "-CachePath", d.CachePath, "-MountPath", d.MountPath, "-Endpoint", s3.Endpoint, "-Bucket", d.Bucket, "-PolicyPath", d.PolicyPath];

        var first = dsc.RunScript("samples/dsc/Apply-CloudDrive.ps1", args, secrets);
        Assert.True(first.ExitCode == 0, first.Output + first.Errors);
        Assert.Contains("In the desired state now: True", first.Output, StringComparison.Ordinal);
        var again = dsc.RunScript("samples/dsc/Apply-CloudDrive.ps1", args, secrets);
        Assert.True(again.ExitCode == 0, again.Output + again.Errors);
        Assert.Contains("in the desired state, nothing to do", again.Output, StringComparison.Ordinal);

        var strict = Path.Combine(d.Root, "strict.yaml");
        await File.WriteAllTextAsync(strict, DriveScenario.Policy(settle: "0s", excludes: """[ "**/*.skip" ]"""));
        var applied = dsc.ApplyConfiguration(Path.Combine(RepoRoot.Path, "samples/dsc/clouddrive.dsc.yaml"), new Dictionary<string, object>
        {
            ["driveName"] = d.Name,
            ["cachePath"] = d.CachePath,
            ["mountPath"] = d.MountPath,
            ["endpoint"] = s3.Endpoint,
            ["bucket"] = d.Bucket,
            ["policyPath"] = new[] { strict },
            ["accessKey"] = s3.AccessKey,
            ["secretKey"] = s3.SecretKey,
        });

        var result = Assert.Single(applied);
        Assert.True(result.ExitCode == 0, result.Errors);
        Assert.Equal(strict, (string)result.Json["policyPath"]!.AsArray().Single()!);
        await File.WriteAllTextAsync(d.Mounted("x.skip"), "local only");
        Assert.Equal("Excluded", StateOf(d, "x.skip"));
        Assert.DoesNotContain(s3.SecretKey, first.Output + first.Errors + result.Output + result.Errors, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Set_refuses_with_an_error_id_what_it_cannot_do_and_changes_nothing()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));

        var missing = Ps.InvokeExpectingError(Resource + "\n$r.Bucket = $null\n$r.Set()", d.Variables());
        Assert.StartsWith("DscPropertyMissing", missing.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Contains("Bucket", missing.Exception.Message, StringComparison.Ordinal);

        Set(d);
        var moved = Ps.InvokeExpectingError(Resource + "\n$r.CachePath = $cache + '-moved'\n$r.Set()", d.Variables());
        Assert.StartsWith("DscPropertyImmutable", moved.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Contains("Ensure = 'Absent'", moved.Exception.Message, StringComparison.Ordinal);

        // Files not yet uploaded: RemoveCache would lose them, so the drive and its cache stay.
        Ps.Invoke("Suspend-CloudDrive -Name $name", d.Variables());
        await File.WriteAllTextAsync(d.Mounted("unsaved.txt"), "only here");
        var unsaved = Ps.InvokeExpectingError(Resource + "\n$r.Ensure = 'Absent'; $r.RemoveCache = $true\n$r.Set()", d.Variables());
        Assert.StartsWith("CacheHasUnsavedFiles", unsaved.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Single(Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()));
        Assert.Equal("only here", await File.ReadAllTextAsync(d.Cached("unsaved.txt")));

        // A file an exclude keeps local is never in the bucket either: it, too, keeps the cache.
        Ps.Invoke("Resume-CloudDrive -Name $name; Invoke-ForceUpload -Drive $name -Path 'unsaved.txt'", d.Variables());
        await File.WriteAllTextAsync(d.Mounted("notes.tmp"), "local by design");
        var excluded = Ps.InvokeExpectingError(Resource + "\n$r.Ensure = 'Absent'; $r.RemoveCache = $true\n$r.Set()", d.Variables());
        Assert.StartsWith("CacheHasUnsavedFiles", excluded.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Contains("exclude", excluded.Exception.Message, StringComparison.Ordinal);
        Assert.Equal("local by design", await File.ReadAllTextAsync(d.Cached("notes.tmp")));
    }

    private const string PeerKeyText = "dsc-peer-key-0123456789abcdef";

    /// <summary>The newer New-CloudDrive settings on $r: a case-insensitive drive telling $peer, listening on $listen, with the peer key.</summary>
    private const string PeerSettings = """

        $r.CaseInsensitive = $true
        $r.Peer = @($peer)
        $r.PeerListen = $listen
        $r.PeerKey = [pscredential]::new('peer', [System.Net.NetworkCredential]::new('', $peerKey).SecurePassword)
        """;

    private static Dictionary<string, object?> PeerVariables(DriveScenario d, string peer, string listen)
    {
        var variables = d.Variables();
        variables["peer"] = peer;
        variables["listen"] = listen;
        variables["peerKey"] = PeerKeyText;
        return variables;
    }

    [Fact]
    public void CaseInsensitive_Peer_PeerListen_and_PeerKey_round_trip_and_the_key_is_never_shown()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var port = S3TestServer.FreePort();
        // The peer as an administrator may write it (upper-case host, a trailing slash); the listener as a port alone.
        var variables = PeerVariables(d, $"HTTP://LocalHost:{S3TestServer.FreePort()}/", port.ToString(System.Globalization.CultureInfo.InvariantCulture));

        Assert.False((bool)Ps.Invoke(Resource + PeerSettings + "\n$r.Test()", variables).Single().BaseObject);
        Ps.Invoke(Resource + PeerSettings + "\n$r.Set()", variables);
        Assert.Empty(Ps.LastErrors);
        Assert.True((bool)Ps.Invoke(Resource + PeerSettings + "\n$r.Test()", variables).Single().BaseObject);

        var drive = Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()).Single();
        Assert.True((bool)drive.Properties["CaseInsensitive"].Value);
        Assert.Equal($"127.0.0.1:{port}", drive.Properties["PeerListen"].Value);
        Assert.True((bool)drive.Properties["PeerKeySet"].Value);
        var got = Ps.Invoke(Resource + "\n$r.Get()", d.Variables()).Single();
        Assert.True((bool)got.Properties["CaseInsensitive"].Value);
        Assert.Equal((string[])drive.Properties["Peers"].Value, (string[])got.Properties["Peer"].Value);
        Assert.Equal($"127.0.0.1:{port}", got.Properties["PeerListen"].Value);
        Assert.True((bool)got.Properties["PeerKeySet"].Value);
        Assert.Null(got.Properties["PeerKey"].Value);

        // What Get() returns, applied as the desired state, is the state: the round trip changes nothing.
        var definitions = DrivesJson;
        var peerKeyFile = Path.Combine(Service.HomePath, "credentials", d.Name + "@peer.json");
        var keyWritten = File.GetLastWriteTimeUtc(peerKeyFile);
        var logLines = LogLines;
        var policyEvents = PolicyEvents(d);
        Ps.Invoke(Resource + "\n$r.CaseInsensitive = $got.CaseInsensitive; $r.Peer = $got.Peer; $r.PeerListen = $got.PeerListen\n$r.Set()",
            new Dictionary<string, object?>(d.Variables()) { ["got"] = got });
        Assert.Empty(Ps.LastErrors);
        Ps.Invoke(Resource + PeerSettings + "\n$r.Set()", variables);
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(definitions, DrivesJson);
        Assert.Equal(keyWritten, File.GetLastWriteTimeUtc(peerKeyFile));
        Assert.Equal(logLines, LogLines);

        // A changed peer list is drift, and Set() applies it; '' stops the listener.
        var other = $"http://127.0.0.1:{S3TestServer.FreePort()}";
        const string change = "\n$r.Peer = @($other); $r.PeerListen = ''";
        var changed = new Dictionary<string, object?>(variables) { ["other"] = other };
        Assert.False((bool)Ps.Invoke(Resource + PeerSettings + change + "\n$r.Test()", changed).Single().BaseObject);
        Ps.Invoke(Resource + PeerSettings + change + "\n$r.Set()", changed);
        Assert.Empty(Ps.LastErrors);
        Assert.True((bool)Ps.Invoke(Resource + PeerSettings + change + "\n$r.Test()", changed).Single().BaseObject);
        drive = Ps.Invoke("Get-CloudDrive -Name $name", d.Variables()).Single();
        Assert.Equal([other], (string[])drive.Properties["Peers"].Value);
        Assert.Null(drive.Properties["PeerListen"].Value);
        Assert.Equal(keyWritten, File.GetLastWriteTimeUtc(peerKeyFile));   // the same key, not written again

        Assert.DoesNotContain(PeerKeyText, Service.ReadLog(), StringComparison.Ordinal);
        Assert.DoesNotContain(PeerKeyText, DrivesJson, StringComparison.Ordinal);
    }

    [Fact]
    public void A_drive_made_case_sensitive_is_drift_for_CaseInsensitive_and_Set_refuses_to_change_it()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Set(d, "\n$r.CaseInsensitive = $false");
        var definitions = DrivesJson;

        Assert.False(Test(d, "\n$r.CaseInsensitive = $true"));
        var refused = Ps.InvokeExpectingError(Resource + "\n$r.CaseInsensitive = $true\n$r.PolicyPath = @()\n$r.Set()", d.Variables());

        Assert.StartsWith("DscPropertyImmutable", refused.FullyQualifiedErrorId, StringComparison.Ordinal);
        Assert.Contains("CaseInsensitive", refused.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("Ensure = 'Absent'", refused.Exception.Message, StringComparison.Ordinal);
        Assert.Equal(definitions, DrivesJson);   // nothing else was changed on the way (not the policy either)
        Assert.False((bool)Ps.Invoke("(Get-CloudDrive -Name $name).CaseInsensitive", d.Variables()).Single().BaseObject);
    }

    [Fact]
    public void The_v3_manifest_takes_caseInsensitive_peer_peerListen_and_peerKey_and_never_returns_the_key()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var dsc = new DscRunner(Service.SocketPath, d.Root);
        var port = S3TestServer.FreePort();
        var peer = $"http://127.0.0.1:{S3TestServer.FreePort()}";
        var desired = new JsonObject
        {
            ["name"] = d.Name,
            ["cachePath"] = d.CachePath,
            ["mountPath"] = d.MountPath,
            ["endpoint"] = s3.Endpoint,
            ["bucket"] = d.Bucket,
            ["credential"] = new JsonObject { ["username"] = s3.AccessKey, ["password"] = s3.SecretKey },
            ["caseInsensitive"] = true,
            ["peer"] = new JsonArray(peer),
            ["peerListen"] = $"127.0.0.1:{port}",
            ["peerKey"] = PeerKeyText,
        };

        var set = dsc.Invoke("set", desired);
        Assert.True(set.ExitCode == 0, set.Errors);
        Assert.True((bool)set.Json["caseInsensitive"]!);
        Assert.Equal(peer, (string)set.Json["peer"]!.AsArray().Single()!);
        Assert.Equal($"127.0.0.1:{port}", (string)set.Json["peerListen"]!);
        Assert.True((bool)set.Json["peerKeySet"]!);
        Assert.False(set.Json.ContainsKey("peerKey"));
        var test = dsc.Invoke("test", desired);
        Assert.True((bool)test.Json["_inDesiredState"]!, test.Output + test.Errors);

        desired["caseInsensitive"] = false;
        var drift = dsc.Invoke("test", desired);
        Assert.False((bool)drift.Json["_inDesiredState"]!);
        var refused = dsc.Invoke("set", desired);
        Assert.NotEqual(0, refused.ExitCode);
        Assert.Contains("DscPropertyImmutable", refused.Errors, StringComparison.Ordinal);

        foreach (var output in new[] { set, test, drift, refused })
        {
            Assert.DoesNotContain(PeerKeyText, output.Output + output.Errors, StringComparison.Ordinal);
        }
    }

    /// <summary>The service shows a key id masked (Get-CloudDrive's AccessKeyId): last 4 characters from 12 on, else stars.</summary>
    private static string MaskedKeyId(string keyId) => keyId.Length >= 12 ? new string('*', keyId.Length - 4) + keyId[^4..] : "****";
}
