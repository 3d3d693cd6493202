using GeoDrive.Api;

namespace GeoDrive.Service.Hosting;

/// <summary>The service's own settings, from the command line (--socket, --home, --tick, --admin-group) or the environment.</summary>
/// <remarks>--socket takes a socket path, or on Windows a pipe address (\\.\pipe\geodrive, the default there).</remarks>
public sealed class ServiceOptions
{
    public string SocketPath { get; init; } = ApiRoutes.DefaultSocketPath;

    /// <summary>Drive definitions and credentials live here (root-only).</summary>
    public string HomePath { get; init; } = ApiRoutes.DefaultHomePath;

    /// <summary>How often each drive's scheduler runs (upload after settle, stub after access wait).</summary>
    public TimeSpan TickInterval { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>TEST ONLY: a file whose ISO-8601 time is the service's clock (see <see cref="FileClock"/>); null = the system clock.</summary>
    public string? TestClockPath { get; init; }

    /// <summary>
    /// A local group whose members may use the control socket besides root (--admin-group; Linux). Null: root only.
    /// </summary>
    public string? AdminGroup { get; init; }

    public static ServiceOptions FromArgs(string[] args)
    {
        string? socket = null, home = null, testClock = null, adminGroup = null;
        var tick = TimeSpan.FromSeconds(1);
        for (var i = 0; i < args.Length; i++)
        {
            var value = i + 1 < args.Length ? args[i + 1] : null;
            switch (args[i])
            {
                case "--socket" when value is not null:
                    socket = value;
                    i++;
                    break;
                case "--home" when value is not null:
                    home = value;
                    i++;
                    break;
                case "--admin-group" when value is not null:
                    adminGroup = value;
                    i++;
                    break;
                case "--test-clock" when value is not null:
                    testClock = value;
                    i++;
                    break;
                case "--tick" when value is not null:
                    tick = TimeSpan.FromMilliseconds(double.Parse(value.TrimEnd('m', 's'), System.Globalization.CultureInfo.InvariantCulture) * (value.EndsWith("ms", StringComparison.Ordinal) ? 1 : 1000));
                    i++;
                    break;
            }
        }
        return new ServiceOptions
        {
            SocketPath = FullAddress(socket ?? ApiRoutes.DefaultSocketPath),
            HomePath = Path.GetFullPath(home ?? ApiRoutes.DefaultHomePath),
            TickInterval = tick,
            TestClockPath = testClock,
            AdminGroup = adminGroup,
        };
    }

    /// <summary>The control API's address as parsed (socket or pipe).</summary>
    public ControlEndpoint Endpoint => ControlEndpoint.Parse(SocketPath);

    /// <summary>A socket path made absolute; a pipe address as given.</summary>
    public static string FullAddress(string address) =>
        ControlEndpoint.Parse(address).IsPipe ? address : Path.GetFullPath(address);
}
