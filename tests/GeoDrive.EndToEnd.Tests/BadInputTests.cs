using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Every refusal has a stable error id and a message that says what to do.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class BadInputTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();
    private PowerShellSession _ps = null!;

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        _ps = new PowerShellSession(_service.SocketPath);
    }

    public async Task DisposeAsync()
    {
        _ps.Dispose();
        await _service.DisposeAsync();
    }

    private const string Cmdlet = ",GeoDrive.Commands.NewCloudDriveCommand";

    [Fact]
    public void A_policy_with_an_unknown_key_is_refused_with_its_line_and_a_suggestion()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy().Replace("accessWait", "acessWait", StringComparison.Ordinal));
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables());

        Assert.Equal("PolicyUnknownKey" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Contains("policy.yaml:5:", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains("did you mean 'accessWait'", error.Exception.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(d.CachePath));
    }

    [Fact]
    public void A_policy_with_a_bad_duration_is_refused_with_its_line_and_column()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "30x"));
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables());

        Assert.Equal("PolicyBadDuration" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Matches(@"policy\.yaml:6:\d+", error.Exception.Message);
        Assert.Contains("Write a duration such as 30s, 5m, 1h30m or 30d", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void An_unreachable_endpoint_is_refused_quickly_and_says_so()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        var started = DateTime.UtcNow;
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables(endpoint: "http://127.0.0.1:1"));

        Assert.Equal("EndpointUnreachable" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(30));
        Assert.Contains("Check the endpoint URL and port, that the S3 server is running", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_bucket_that_does_not_exist_is_refused()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables(bucket: "no-such-bucket-" + Guid.NewGuid().ToString("N")[..8]));

        Assert.Equal("BucketNotFound" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Contains("Create the bucket first (GeoDrive never creates buckets), or correct -Bucket", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_mount_path_that_does_not_exist_is_refused()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        var vars = d.Variables();
        vars["mnt"] = Path.Combine(d.Root, "no", "such", "folder");
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, vars);

        Assert.Equal("MountPathNotFound" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Contains("mkdir -p", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_mount_path_that_is_not_empty_is_refused()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        File.WriteAllText(Path.Combine(d.MountPath, "somebody-elses.txt"), "x");
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables());

        Assert.Equal("MountPathNotEmpty" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Contains("Mount over an empty folder", error.Exception.Message, StringComparison.Ordinal);
        Assert.Equal("x", File.ReadAllText(Path.Combine(d.MountPath, "somebody-elses.txt")));
    }

    [Fact]
    public void A_second_drive_on_the_same_cache_path_is_refused()
    {
        using var first = new DriveScenario(s3, DriveScenario.Policy());
        using var second = new DriveScenario(s3, DriveScenario.Policy());
        _ps.Invoke(DriveScenario.NewDriveScript, first.Variables());
        Assert.Empty(_ps.LastErrors);
        var vars = second.Variables();
        vars["cache"] = first.CachePath;

        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, vars);

        Assert.Equal("CachePathInUse" + Cmdlet, error.FullyQualifiedErrorId);
        Assert.Contains("Give every drive its own cache folder", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_cmdlet_used_while_the_service_is_down_says_how_to_start_it()
    {
        await _service.StopAsync();
        var error = _ps.InvokeExpectingError("Get-CloudDrive");

        Assert.Equal("ServiceNotRunning,GeoDrive.Commands.GetCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains("Start-GeoDriveService", error.Exception.Message, StringComparison.Ordinal);
    }
}

/// <summary>Wrong credentials need a server that checks signatures: Ceph's RADOS Gateway.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class CredentialTests : IAsyncLifetime, IClassFixture<CephS3Fixture>
{
    private readonly CephS3Fixture _ceph;
    private readonly ServiceProcess _service = new();
    private PowerShellSession _ps = null!;

    public CredentialTests(CephS3Fixture ceph) => _ceph = ceph;

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        _ps = new PowerShellSession(_service.SocketPath);
    }

    public async Task DisposeAsync()
    {
        _ps.Dispose();
        await _service.DisposeAsync();
    }

    [Fact]
    public void Wrong_credentials_are_refused_and_the_secret_is_never_echoed()
    {
        using var d = new DriveScenario(_ceph, DriveScenario.Policy());
        const string wrongSecret = "Wr0ngSecret-do-not-print-me";
        var error = _ps.InvokeExpectingError(DriveScenario.NewDriveScript, d.Variables(secret: wrongSecret));

        Assert.Equal("CredentialsRejected,GeoDrive.Commands.NewCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains("Check the access key and the secret key (pass them again with -Credential)", error.Exception.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(wrongSecret, error.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(wrongSecret, error.Exception.ToString(), StringComparison.Ordinal);
        Assert.DoesNotContain(wrongSecret, _service.ReadLog(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_scenario_works_against_a_server_that_checks_signatures()
    {
        using var d = new DriveScenario(_ceph, DriveScenario.Policy(settle: "0s"));
        _ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(_ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("signed.txt"), "hello");
        await DriveScenario.EventuallyAsync(
            () => _ps.Invoke("(Get-CloudFile -Drive $name -Path signed.txt).State", d.Variables()).Single().ToString() == "Cached", "signed.txt Cached");
        _ps.Invoke("Invoke-ForceStub -Drive $name -Path signed.txt -Confirm:$false", d.Variables());
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("signed.txt")));
        Assert.Equal("hello", await File.ReadAllTextAsync(d.Mounted("signed.txt")));
        Assert.DoesNotContain(_ceph.SecretKey, _service.ReadLog(), StringComparison.Ordinal);
    }
}
