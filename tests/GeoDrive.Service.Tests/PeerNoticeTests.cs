using System.Text;
using GeoDrive.Core.Errors;
using GeoDrive.Service.Drives;
using GeoDrive.Service.Peers;
using GeoDrive.TestSupport;

namespace GeoDrive.Service.Tests;

/// <summary>The peer settings' checks, the notice's signature and the replay guard, without a service or a network.</summary>
public sealed class PeerNoticeTests
{
    private static readonly byte[] Key = PeerSignature.KeyBytes("a-key-of-the-tests-only-0123456789");
    private static readonly byte[] Body = """{"bucket":"b","prefix":"","changes":[{"kind":"put","key":"a.txt"}]}"""u8.ToArray();

    [Fact]
    public void A_signature_holds_only_for_the_same_key_time_nonce_and_body()
    {
        var signature = PeerSignature.Sign(Key, "1000", "n1", Body);

        Assert.True(PeerSignature.Verify(Key, "1000", "n1", Body, signature));
        Assert.True(PeerSignature.Verify(Key, "1000", "n1", Body, signature.ToUpperInvariant()));
        Assert.False(PeerSignature.Verify(PeerSignature.KeyBytes("another-key-0123456789"), "1000", "n1", Body, signature));
        Assert.False(PeerSignature.Verify(Key, "1001", "n1", Body, signature));
        Assert.False(PeerSignature.Verify(Key, "1000", "n2", Body, signature));
        Assert.False(PeerSignature.Verify(Key, "1000", "n1", Encoding.UTF8.GetBytes("{}"), signature));
        Assert.False(PeerSignature.Verify(Key, "1000", "n1", Body, "00"));
    }

    [Fact]
    public void The_replay_guard_refuses_a_nonce_seen_before_and_a_time_out_of_the_window_and_forgets_old_nonces()
    {
        var clock = new ManualClock();
        var guard = new ReplayGuard(clock);
        var now = PeerSignature.Timestamp(clock.UtcNow);

        Assert.Null(guard.Check(now, "n1"));
        Assert.Contains("seen before", guard.Check(now, "n1"));
        Assert.Null(guard.Check(now, "n2"));
        Assert.Contains("more than 5 minutes", guard.Check(PeerSignature.Timestamp(clock.UtcNow.AddMinutes(-6)), "n3"));
        Assert.Contains("more than 5 minutes", guard.Check(PeerSignature.Timestamp(clock.UtcNow.AddMinutes(6)), "n4"));
        Assert.Contains("not a Unix time", guard.Check("yesterday", "n5"));

        // Ten minutes on, n1 is forgotten, and a notice bearing it is refused by its time anyway.
        clock.Advance(TimeSpan.FromMinutes(11));
        Assert.Contains("more than 5 minutes", guard.Check(now, "n1"));
        Assert.Null(guard.Check(PeerSignature.Timestamp(clock.UtcNow), "n1"));
    }

    [Theory]
    [InlineData("7701", "127.0.0.1:7701")]
    [InlineData("0.0.0.0:7701", "0.0.0.0:7701")]
    [InlineData("[::1]:7701", "[::1]:7701")]
    [InlineData(" 10.1.2.3:80 ", "10.1.2.3:80")]
    public void A_listen_address_is_an_ip_and_a_port_or_a_port_alone_for_loopback(string given, string expected) =>
        Assert.Equal(expected, DriveRequests.PeerListenOf(given));

    [Theory]
    [InlineData("site-a:7701")]
    [InlineData("10.1.2.3")]
    [InlineData("0")]
    [InlineData("10.1.2.3:70000")]
    public void A_listen_address_that_is_not_an_ip_and_port_is_refused_naming_it(string given)
    {
        var error = Assert.Throws<GeoDriveException>(() => DriveRequests.PeerListenOf(given));
        Assert.Equal(ErrorIds.InvalidRequest, error.ErrorId);
        Assert.Contains(given, error.Message, StringComparison.Ordinal);
        Assert.Contains("0.0.0.0:7701", error.Remedy, StringComparison.Ordinal);
    }

    [Fact]
    public void Peers_are_http_urls_of_a_host_and_port_normalised_without_repeats()
    {
        Assert.Equal(["http://site-b:7701", "https://site-c.example.com"], DriveRequests.PeersOf(["http://site-b:7701/", "HTTP://SITE-B:7701", "https://site-c.example.com", " "]));
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.PeersOf(["site-b:7701"])).ErrorId);
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.PeersOf(["http://site-b:7701/v1/other"])).ErrorId);
    }

    [Fact]
    public void A_short_peer_key_is_refused_and_peers_without_a_key_are_refused_with_PeerKeyMissing()
    {
        Assert.Null(DriveRequests.PeerKeyOf(null));
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.PeerKeyOf("short")).ErrorId);
        var request = new GeoDrive.Api.NewDriveRequest
        {
            Name = "projects", CachePath = "/srv/projects-cache", MountPath = "/mnt/projects", Endpoint = "http://127.0.0.1:9000", Bucket = "projects",
            AccessKey = "AK", SecretKey = "SK", Peers = ["http://site-b:7701"],
        };
        var error = Assert.Throws<GeoDriveException>(() => DriveRequests.NewDefinition(request, [], inPlace: false));
        Assert.Equal(ErrorIds.PeerKeyMissing, error.ErrorId);
        Assert.Contains("-PeerKey", error.Remedy, StringComparison.Ordinal);
    }
}
