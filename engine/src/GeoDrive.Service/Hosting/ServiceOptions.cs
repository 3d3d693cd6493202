using GeoDrive.Api;

namespace GeoDrive.Service.Hosting;

/// <summary>The service's own settings, from the command line (--socket, --home, --tick, --admin-group, --metrics-listen) or the environment.</summary>
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

    /// <summary>
    /// Where the Prometheus scrape endpoint listens (--metrics-listen, GEODRIVE_METRICS_LISTEN); null: it does not (the default).
    /// Loopback unless --metrics-allow-remote (<see cref="MetricsAddress"/>).
    /// </summary>
    public System.Net.IPEndPoint? MetricsListen { get; init; }

    /// <summary>
    /// How long after a start a request the previous run sent before it died may still land on the S3 server (--late-write-grace,
    /// GEODRIVE_LATE_WRITE_GRACE; a duration as policies write one: 2m, 90s). See <see cref="Engine.Drives.DriveEngineOptions.LateWriteGrace"/>.
    /// </summary>
    public TimeSpan LateWriteGrace { get; init; } = Engine.Drives.DriveEngineOptions.DefaultLateWriteGrace;

    public const string LateWriteGraceEnvironmentVariable = "GEODRIVE_LATE_WRITE_GRACE";

    /// <summary>Parses the command line; throws MetricsListenRefused for a metrics address it will not serve.</summary>
    public static ServiceOptions FromArgs(string[] args) => FromArgs(args, Environment.GetEnvironmentVariable);

    public static ServiceOptions FromArgs(string[] args, Func<string, string?> environment)
    {
        string? socket = null, home = null, testClock = null, adminGroup = null;
        var lateWriteGrace = environment(LateWriteGraceEnvironmentVariable);
        var metricsListen = environment(MetricsAddress.ListenEnvironmentVariable);
        var allowRemote = environment(MetricsAddress.AllowRemoteEnvironmentVariable) is "1" or "true" or "True";
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
                case "--metrics-listen" when value is not null:
                    metricsListen = value;
                    i++;
                    break;
                case "--late-write-grace" when value is not null:
                    lateWriteGrace = value;
                    i++;
                    break;
                case "--metrics-allow-remote":
                    allowRemote = true;
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
            MetricsListen = string.IsNullOrWhiteSpace(metricsListen) ? null : MetricsAddress.Parse(metricsListen, allowRemote),
            LateWriteGrace = string.IsNullOrWhiteSpace(lateWriteGrace) ? Engine.Drives.DriveEngineOptions.DefaultLateWriteGrace : Grace(lateWriteGrace),
        };
    }

    private static TimeSpan Grace(string text) =>
        Policies.Loading.PolicyUnits.TryParseDuration(text, out var grace, out var error)
            ? grace
            : throw new Core.Errors.GeoDriveException(Core.Errors.ErrorIds.ServiceOptionRefused, Core.Errors.ErrorKind.InvalidArgument,
                $"--late-write-grace ({LateWriteGraceEnvironmentVariable}): {error}.", "Give a duration such as 2m or 90s, or leave it out for 2 minutes.");

    /// <summary>The control API's address as parsed (socket or pipe).</summary>
    public ControlEndpoint Endpoint => ControlEndpoint.Parse(SocketPath);

    /// <summary>A socket path made absolute; a pipe address as given.</summary>
    public static string FullAddress(string address) =>
        ControlEndpoint.Parse(address).IsPipe ? address : Path.GetFullPath(address);
}
