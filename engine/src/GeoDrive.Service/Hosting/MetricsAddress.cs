using System.Globalization;
using System.Net;
using GeoDrive.Core.Errors;

namespace GeoDrive.Service.Hosting;

/// <summary>
/// Where the Prometheus scrape endpoint listens (docs/decisions/0023-metrics.md): nowhere unless told
/// (--metrics-listen or GEODRIVE_METRICS_LISTEN). A bare port is that port on 127.0.0.1. The endpoint has no
/// authentication and no TLS, so an address other than loopback is refused unless the administrator also says
/// --metrics-allow-remote (or GEODRIVE_METRICS_ALLOW_REMOTE=1).
/// </summary>
public static class MetricsAddress
{
    public const string ListenEnvironmentVariable = "GEODRIVE_METRICS_LISTEN";
    public const string AllowRemoteEnvironmentVariable = "GEODRIVE_METRICS_ALLOW_REMOTE";

    /// <summary>The scrape path, as Prometheus expects it by default.</summary>
    public const string ScrapePath = "/metrics";

    /// <summary>
    /// "PORT", "IP:PORT", "[IPv6]:PORT" or "localhost:PORT" as an endpoint; throws MetricsListenRefused for anything else,
    /// and for an address that is not loopback unless <paramref name="allowRemote"/>.
    /// </summary>
    public static IPEndPoint Parse(string value, bool allowRemote)
    {
        var text = value.Trim();
        IPAddress address;
        string portText;
        if (!text.Contains(':', StringComparison.Ordinal))
        {
            address = IPAddress.Loopback;
            portText = text;
        }
        else
        {
            var colon = text.LastIndexOf(':');
            var host = text[..colon].Trim('[', ']');
            portText = text[(colon + 1)..];
            if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
            {
                address = IPAddress.Loopback;
            }
            else if (!IPAddress.TryParse(host, out address!))
            {
                throw Refused($"'{value}' does not name an IP address: the metrics endpoint listens on an address of this host, never a name to look up.",
                    "Give 127.0.0.1:PORT (this host only), or an address of one of this host's interfaces with --metrics-allow-remote.");
            }
        }
        if (!int.TryParse(portText, NumberStyles.None, CultureInfo.InvariantCulture, out var port) || port is < 1 or > 65535)
        {
            throw Refused($"'{value}' has no port between 1 and 65535.", "Give PORT or ADDRESS:PORT, e.g. 9464 or 127.0.0.1:9464.");
        }
        if (!IPAddress.IsLoopback(address) && !allowRemote)
        {
            throw Refused($"'{value}' is not a loopback address, and the metrics endpoint has no authentication or TLS: anyone who reaches it reads the drives' names, endpoints and counts.",
                "Serve it on 127.0.0.1 and let a local agent scrape it, or say so with --metrics-allow-remote (GEODRIVE_METRICS_ALLOW_REMOTE=1) and limit who reaches the port with the firewall.");
        }
        return new IPEndPoint(address, port);
    }

    private static GeoDriveException Refused(string message, string remedy) =>
        new(ErrorIds.MetricsListenRefused, ErrorKind.InvalidArgument, message, remedy);
}
