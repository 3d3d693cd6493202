using System.Net;
using GeoDrive.Core.Errors;
using GeoDrive.Service.Hosting;

namespace GeoDrive.Service.Tests;

/// <summary>Where the Prometheus scrape endpoint may listen (docs/decisions/0023-metrics.md): nowhere by default, loopback unless remote is allowed.</summary>
public sealed class MetricsAddressTests
{
    private static ServiceOptions Options(string[] args, Dictionary<string, string>? environment = null) =>
        ServiceOptions.FromArgs(args, name => environment?.GetValueOrDefault(name));

    [Fact]
    public void Without_metrics_listen_there_is_no_metrics_endpoint() =>
        Assert.Null(Options(["--socket", "/tmp/x.sock"]).MetricsListen);

    [Theory]
    [InlineData("9464", "127.0.0.1:9464")]
    [InlineData("127.0.0.1:9464", "127.0.0.1:9464")]
    [InlineData("localhost:9464", "127.0.0.1:9464")]
    [InlineData("[::1]:9464", "[::1]:9464")]
    [InlineData("127.0.0.2:9100", "127.0.0.2:9100")]
    public void A_port_or_a_loopback_address_is_served(string given, string expected) =>
        Assert.Equal(IPEndPoint.Parse(expected), Options(["--metrics-listen", given]).MetricsListen);

    [Theory]
    [InlineData("0.0.0.0:9464")]
    [InlineData("[::]:9464")]
    [InlineData("192.0.2.10:9464")]
    public void A_non_loopback_address_is_refused_with_its_remedy(string given)
    {
        var refused = Assert.Throws<GeoDriveException>(() => Options(["--metrics-listen", given]));

        Assert.Equal(ErrorIds.MetricsListenRefused, refused.ErrorId);
        Assert.Contains("--metrics-allow-remote", refused.Remedy, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("0.0.0.0:9464")]
    [InlineData("192.0.2.10:9464")]
    public void A_non_loopback_address_is_served_when_remote_is_allowed(string given) =>
        Assert.Equal(IPEndPoint.Parse(given), Options(["--metrics-listen", given, "--metrics-allow-remote"]).MetricsListen);

    [Theory]
    [InlineData("metrics.example.com:9464")]
    [InlineData("127.0.0.1")]
    [InlineData("127.0.0.1:0")]
    [InlineData("127.0.0.1:70000")]
    [InlineData("port")]
    public void A_name_to_look_up_or_a_bad_port_is_refused(string given) =>
        Assert.Equal(ErrorIds.MetricsListenRefused, Assert.Throws<GeoDriveException>(() => Options(["--metrics-listen", given, "--metrics-allow-remote"])).ErrorId);

    [Fact]
    public void The_environment_names_the_address_and_allows_remote_as_the_command_line_does()
    {
        var env = new Dictionary<string, string> { [MetricsAddress.ListenEnvironmentVariable] = "0.0.0.0:9464" };
        Assert.Equal(ErrorIds.MetricsListenRefused, Assert.Throws<GeoDriveException>(() => Options([], env)).ErrorId);

        env[MetricsAddress.AllowRemoteEnvironmentVariable] = "1";
        Assert.Equal(IPEndPoint.Parse("0.0.0.0:9464"), Options([], env).MetricsListen);
    }

    [Fact]
    public void The_command_line_wins_over_the_environment() =>
        Assert.Equal(IPEndPoint.Parse("127.0.0.1:9100"),
            Options(["--metrics-listen", "9100"], new() { [MetricsAddress.ListenEnvironmentVariable] = "9464" }).MetricsListen);
}
