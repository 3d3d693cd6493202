using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Two sites on one bucket that tell each other of their changes (docs/decisions/0020-peers-told-of-changes.md): two real
/// services, one drive each, each listening for the other on loopback. What the other site shows is read from its cache
/// folder and its index, never through its mount, so no listing or lookup of its own brings the file: only the notice does.
/// updateWait is an hour, so nothing else would.
/// </summary>
[System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
[Collection(EndToEndCollection.Name)]
public sealed class PeerTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _east = new();
    private readonly ServiceProcess _west = new();
    private readonly int _eastPort = FreePort();
    private readonly int _westPort = FreePort();
    // The sites' shared secret: made here, given to the cmdlets as a SecureString, never written to the test's output.
    private readonly string _peerKey = Convert.ToBase64String(RandomNumberGenerator.GetBytes(32));

    private static string Policy => """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: peers }
        spec:
          stubbing: { enabled: true, accessWait: 30d }
          upload: { settle: 0s, updateWait: 1h }
        """;

    public async Task InitializeAsync()
    {
        await _east.StartAsync();
        await _west.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _east.DisposeAsync();
        await _west.DisposeAsync();
    }

    private static int FreePort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    private const string NewPeerDriveScript = """
        $cred = [pscredential]::new($ak, [System.Net.NetworkCredential]::new('', $sk).SecurePassword)
        $key = [System.Net.NetworkCredential]::new('', $peerkey).SecurePassword
        New-CloudDrive -Name $name -CachePath $cache -MountPath $mnt -Endpoint $endpoint -Bucket $bucket -Credential $cred -PolicyPath $policy `
            -Peer $peer -PeerListen $listen -PeerKey $key
        """;

    private void NewDrive(ServiceProcess service, DriveScenario site, string bucket, int listen, int peer)
    {
        using var ps = new PowerShellSession(service.SocketPath);
        var variables = site.Variables(bucket: bucket);
        variables["peer"] = $"http://127.0.0.1:{peer}";
        variables["listen"] = $"127.0.0.1:{listen}";
        variables["peerkey"] = _peerKey;
        ps.Invoke(NewPeerDriveScript, variables);
        Assert.True(ps.LastErrors.Count == 0, string.Join("\n", ps.LastErrors));
    }

    private (DriveScenario East, DriveScenario West) TwoSites(string? westPolicy = null)
    {
        var east = new DriveScenario(s3, Policy);
        var west = new DriveScenario(s3, westPolicy ?? Policy);
        NewDrive(_east, east, east.Bucket, _eastPort, _westPort);
        NewDrive(_west, west, east.Bucket, _westPort, _eastPort);
        return (east, west);
    }

    private static async Task WaitStateAsync(ServiceProcess service, DriveScenario site, string path, string state, int seconds = 30)
    {
        using var client = new GeoDriveClient(service.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(() =>
        {
            try
            {
                return client.GetFilesAsync(site.Name, path).GetAwaiter().GetResult() is [{ } file] && file.State == state;
            }
            catch (Core.Errors.GeoDriveException ex) when (ex.ErrorId == "DriveNotMounted")
            {
                // A service just started answers before its drives are back.
                return false;
            }
        }, $"{path} {state} on {site.Name}", seconds);
    }

    private static async Task WaitGoneAsync(ServiceProcess service, DriveScenario site, string path, int seconds = 30)
    {
        using var client = new GeoDriveClient(service.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(
            () => client.GetFilesAsync(site.Name, path).GetAwaiter().GetResult() is [] && !File.Exists(site.Cached(path)),
            $"{path} gone from {site.Name}", seconds);
    }

    [Fact]
    public async Task A_file_uploaded_on_one_site_appears_as_a_stub_on_its_peer_in_a_folder_the_peer_never_listed()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        var bytes = DriveRig.RandomBytes(200_000, 21);

        Directory.CreateDirectory(east.Mounted("reports/2026"));
        await File.WriteAllBytesAsync(east.Mounted("reports/2026/q3.bin"), bytes);
        await WaitStateAsync(_east, east, "reports/2026/q3.bin", "Cached");

        // Nothing on the west lists or looks up 'reports': its cache and index get the stub from the notice alone.
        await WaitStateAsync(_west, west, "reports/2026/q3.bin", "Stubbed", seconds: 10);
        // The index shows the stub before its cache file exists (index first, so a crash between leaves nothing that
        // looks like data): CI once looked in that moment (2026-11-27).
        await DriveScenario.EventuallyAsync(() => File.Exists(west.Cached("reports/2026/q3.bin")), "the stub's cache file on the west", seconds: 10);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(west.Mounted("reports/2026/q3.bin")));
    }

    [Fact]
    public async Task Under_peerChanges_recall_the_peer_recalls_the_file_at_once_without_anyone_opening_it()
    {
        var (east, west) = TwoSites(Policy.Replace("updateWait: 1h }", "updateWait: 1h, peerChanges: recall }", StringComparison.Ordinal));
        using var _ = east;
        using var __ = west;
        var bytes = DriveRig.RandomBytes(300_000, 22);

        await File.WriteAllBytesAsync(east.Mounted("plan.bin"), bytes);
        await WaitStateAsync(_east, east, "plan.bin", "Cached");

        await WaitStateAsync(_west, west, "plan.bin", "Cached", seconds: 15);
        Assert.Equal(bytes, await File.ReadAllBytesAsync(west.Cached("plan.bin")));
    }

    [Fact]
    public async Task A_rename_and_a_delete_on_one_site_are_followed_on_its_peer()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        Directory.CreateDirectory(east.Mounted("inbox"));
        await File.WriteAllTextAsync(east.Mounted("inbox/one.txt"), "one");
        await File.WriteAllTextAsync(east.Mounted("inbox/two.txt"), "two");
        await WaitStateAsync(_east, east, "inbox/one.txt", "Cached");
        await WaitStateAsync(_east, east, "inbox/two.txt", "Cached");
        await WaitStateAsync(_west, west, "inbox/one.txt", "Stubbed", seconds: 10);
        await WaitStateAsync(_west, west, "inbox/two.txt", "Stubbed", seconds: 10);

        Directory.CreateDirectory(east.Mounted("done"));
        File.Move(east.Mounted("inbox/one.txt"), east.Mounted("done/uno.txt"));
        await WaitStateAsync(_west, west, "done/uno.txt", "Stubbed", seconds: 15);
        await WaitGoneAsync(_west, west, "inbox/one.txt", seconds: 15);

        File.Delete(east.Mounted("inbox/two.txt"));
        await WaitGoneAsync(_west, west, "inbox/two.txt", seconds: 15);

        Assert.Equal("one", await File.ReadAllTextAsync(west.Mounted("done/uno.txt")));
        using var client = new GeoDriveClient(_west.SocketPath, TimeSpan.FromSeconds(30));
        var events = await client.GetEventsAsync(west.Name, new DriveEventQuery { Kinds = ["Sync"] });
        Assert.Contains(events, e => e.Path == "inbox/two.txt" && e.Message.Contains("Deleted in the bucket", StringComparison.Ordinal));
    }

    [Fact]
    public async Task An_empty_folder_and_a_change_of_mode_and_time_on_one_site_are_followed_on_its_peer()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        await File.WriteAllTextAsync(east.Mounted("budget.txt"), "budget");
        await WaitStateAsync(_east, east, "budget.txt", "Cached");
        await WaitStateAsync(_west, west, "budget.txt", "Stubbed", seconds: 10);

        // Neither makes a byte move: the folder is a marker, the mode and time a copy of the object onto itself.
        Directory.CreateDirectory(east.Mounted("clients/acme/inbox"));
        File.SetUnixFileMode(east.Mounted("budget.txt"), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        File.SetLastWriteTimeUtc(east.Mounted("budget.txt"), new DateTime(2024, 5, 6, 7, 8, 9, DateTimeKind.Utc));

        await DriveScenario.EventuallyAsync(() => Directory.Exists(west.Cached("clients/acme/inbox")), "the empty folder on the west", seconds: 15);
        await DriveScenario.EventuallyAsync(
            () => File.GetUnixFileMode(west.Cached("budget.txt")) == (UnixFileMode.UserRead | UnixFileMode.UserWrite)
                && File.GetLastWriteTimeUtc(west.Cached("budget.txt")) == new DateTime(2024, 5, 6, 7, 8, 9, DateTimeKind.Utc),
            "the mode and time on the west", seconds: 15);
        await WaitStateAsync(_west, west, "budget.txt", "Stubbed");
        Assert.Equal("budget", await File.ReadAllTextAsync(west.Mounted("budget.txt")));
    }

    [Fact]
    public async Task A_notice_with_a_bad_signature_or_sent_again_is_refused_with_an_event_and_changes_nothing()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        await File.WriteAllTextAsync(east.Mounted("keep.txt"), "kept");
        await WaitStateAsync(_east, east, "keep.txt", "Cached");
        await WaitStateAsync(_west, west, "keep.txt", "Stubbed", seconds: 10);
        // Written straight into the bucket by another tool: only a notice (or a listing an hour from now) would show it.
        await east.Bucket_.PutAsync("planted.txt", new MemoryStream("planted"u8.ToArray()), 7, new Dictionary<string, string>());

        using var http = new HttpClient();
        var body = Encoding.UTF8.GetBytes($$"""{"bucket":"{{east.Bucket}}","prefix":"","from":"forger","changes":[{"kind":"delete","key":"keep.txt"},{"kind":"put","key":"planted.txt"}]}""");
        var wrongKey = Convert.ToBase64String(RandomNumberGenerator.GetBytes(32));
        var forged = await PostAsync(http, body, wrongKey, DateTimeOffset.UtcNow, Guid.NewGuid().ToString("N"));
        Assert.Equal(HttpStatusCode.Unauthorized, forged.Status);
        Assert.Contains("\"PeerSignatureInvalid\"", forged.Body, StringComparison.Ordinal);

        var stale = await PostAsync(http, body, _peerKey, DateTimeOffset.UtcNow.AddMinutes(-10), Guid.NewGuid().ToString("N"));
        Assert.Equal(HttpStatusCode.Unauthorized, stale.Status);
        Assert.Contains("\"PeerNoticeReplayed\"", stale.Body, StringComparison.Ordinal);

        using var client = new GeoDriveClient(_west.SocketPath, TimeSpan.FromSeconds(30));
        await DriveScenario.EventuallyAsync(() => client.GetEventsAsync(west.Name, new DriveEventQuery { Kinds = ["Error"] }).GetAwaiter().GetResult()
            is var events && events.Any(e => e.ErrorId == "PeerSignatureInvalid") && events.Any(e => e.ErrorId == "PeerNoticeReplayed"), "both refusals in the west's events", seconds: 10);
        Assert.True(File.Exists(west.Cached("keep.txt")));
        Assert.Empty(await client.GetFilesAsync(west.Name, "planted.txt"));
        Assert.False(File.Exists(west.Cached("planted.txt")));

        // Signed with the right key, the same notice is a hint: the bucket still holds keep.txt, so it stays; planted.txt shows.
        var nonce = Guid.NewGuid().ToString("N");
        var now = DateTimeOffset.UtcNow;
        var signed = await PostAsync(http, body, _peerKey, now, nonce);
        Assert.Equal(HttpStatusCode.Accepted, signed.Status);
        await WaitStateAsync(_west, west, "planted.txt", "Stubbed", seconds: 10);
        Assert.True(File.Exists(west.Cached("keep.txt")));
        Assert.Equal("kept", await File.ReadAllTextAsync(west.Mounted("keep.txt")));

        // The very same request again is a replay.
        var again = await PostAsync(http, body, _peerKey, now, nonce);
        Assert.Equal(HttpStatusCode.Unauthorized, again.Status);
        Assert.Contains("\"PeerNoticeReplayed\"", again.Body, StringComparison.Ordinal);
    }

    private async Task<(HttpStatusCode Status, string Body)> PostAsync(HttpClient http, byte[] body, string key, DateTimeOffset time, string nonce)
    {
        var timestamp = time.ToUnixTimeMilliseconds().ToString(System.Globalization.CultureInfo.InvariantCulture);
        using var hmac = IncrementalHash.CreateHMAC(HashAlgorithmName.SHA256, Encoding.UTF8.GetBytes(key));
        hmac.AppendData(Encoding.UTF8.GetBytes($"geodrive-peer-v1\n{timestamp}\n{nonce}\n"));
        hmac.AppendData(body);
        using var request = new HttpRequestMessage(HttpMethod.Post, $"http://127.0.0.1:{_westPort}/v1/peer/notices") { Content = new ByteArrayContent(body) };
        request.Headers.Add("X-GeoDrive-Timestamp", timestamp);
        request.Headers.Add("X-GeoDrive-Nonce", nonce);
        request.Headers.Add("X-GeoDrive-Signature", Convert.ToHexStringLower(hmac.GetHashAndReset()));
        using var response = await http.SendAsync(request);
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task A_peer_that_was_down_gets_the_notice_when_it_returns_and_catches_up_from_the_bucket_at_its_start()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        Directory.CreateDirectory(east.Mounted("scans"));
        Directory.CreateDirectory(east.Mounted("archive"));
        await File.WriteAllTextAsync(east.Mounted("scans/first.txt"), "first");
        await File.WriteAllTextAsync(east.Mounted("archive/old.txt"), "old");
        await WaitStateAsync(_west, west, "scans/first.txt", "Stubbed");
        await WaitStateAsync(_west, west, "archive/old.txt", "Stubbed");

        await _west.StopAsync();
        await File.WriteAllTextAsync(east.Mounted("scans/second.txt"), "second");
        await WaitStateAsync(_east, east, "scans/second.txt", "Cached");
        using (var eastClient = new GeoDriveClient(_east.SocketPath, TimeSpan.FromSeconds(30)))
        {
            await DriveScenario.EventuallyAsync(() => eastClient.GetEventsAsync(east.Name, new DriveEventQuery { Kinds = ["Error"] }).GetAwaiter().GetResult()
                .Any(e => e.ErrorId == "PeerUnreachable"), "the east says its peer does not answer", seconds: 15);
        }
        // Written by a tool straight into the bucket, in a folder no notice names: only the catch-up at start can bring it.
        await east.Bucket_.PutAsync("archive/third.txt", new MemoryStream("third"u8.ToArray()), 5, new Dictionary<string, string>());

        await _west.StartAsync();
        // The east's notice is tried again with backoff (about half a minute in all) and lands once the west listens.
        await WaitStateAsync(_west, west, "scans/second.txt", "Stubbed", seconds: 30);
        // The west re-lists the folders its cache has when its drive starts.
        await WaitStateAsync(_west, west, "archive/third.txt", "Stubbed", seconds: 20);
        Assert.Equal("second", await File.ReadAllTextAsync(west.Mounted("scans/second.txt")));
        Assert.Equal("third", await File.ReadAllTextAsync(west.Mounted("archive/third.txt")));
    }

    [Fact]
    public void A_peer_listener_on_a_port_another_program_holds_refuses_the_drive_with_PeerListenFailed_and_keeps_nothing()
    {
        using var squatter = new TcpListener(IPAddress.Loopback, 0);
        squatter.Start();
        var taken = ((IPEndPoint)squatter.LocalEndpoint).Port;
        using var east = new DriveScenario(s3, Policy);
        using var ps = new PowerShellSession(_east.SocketPath);
        var variables = east.Variables();
        variables["peer"] = $"http://127.0.0.1:{_westPort}";
        variables["listen"] = $"127.0.0.1:{taken}";
        variables["peerkey"] = _peerKey;

        var error = ps.InvokeExpectingError(NewPeerDriveScript, variables);

        Assert.Equal("PeerListenFailed,GeoDrive.Commands.NewCloudDriveCommand", error.FullyQualifiedErrorId);
        Assert.Contains($"127.0.0.1:{taken}", error.Exception.Message, StringComparison.Ordinal);
        Assert.Empty(ps.Invoke("Get-CloudDrive"));
        Assert.DoesNotContain(_peerKey, error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Get_CloudDrive_shows_the_peers_and_never_the_key_and_Set_CloudDrive_changes_them()
    {
        var (east, west) = TwoSites();
        using var _ = east;
        using var __ = west;
        using var ps = new PowerShellSession(_east.SocketPath);
        var drive = ps.Invoke("Get-CloudDrive -Name $name", new Dictionary<string, object?> { ["name"] = east.Name }).Single();
        Assert.Equal(new[] { $"http://127.0.0.1:{_westPort}" }, (string[])drive.Properties["Peers"].Value);
        Assert.Equal($"127.0.0.1:{_eastPort}", drive.Properties["PeerListen"].Value);
        Assert.True((bool)drive.Properties["PeerKeySet"].Value);
        Assert.DoesNotContain(_peerKey, File.ReadAllText(Path.Combine(_east.HomePath, "drives.json")), StringComparison.Ordinal);
        Assert.DoesNotContain(_peerKey, _east.ReadLog(), StringComparison.Ordinal);

        ps.Invoke("Set-CloudDrive -Name $name -Peer @() -PeerListen ''", new Dictionary<string, object?> { ["name"] = east.Name });
        Assert.True(ps.LastErrors.Count == 0, string.Join("\n", ps.LastErrors));
        drive = ps.Invoke("Get-CloudDrive -Name $name", new Dictionary<string, object?> { ["name"] = east.Name }).Single();
        Assert.Empty((string[])drive.Properties["Peers"].Value);
        Assert.Null(drive.Properties["PeerListen"].Value);
        // The listener is gone: nothing answers on its port.
        using var tcp = new TcpClient();
        await Assert.ThrowsAnyAsync<SocketException>(() => tcp.ConnectAsync(IPAddress.Loopback, _eastPort));

        var refused = ps.InvokeExpectingError("Set-CloudDrive -Name $name -PeerListen 'site-a:80'", new Dictionary<string, object?> { ["name"] = east.Name });
        Assert.StartsWith("InvalidRequest,", refused.FullyQualifiedErrorId, StringComparison.Ordinal);
    }
}
