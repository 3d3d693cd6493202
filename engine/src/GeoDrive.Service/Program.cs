using GeoDrive.Core.Ports;
using GeoDrive.Service.ControlApi;
using GeoDrive.Service.Drives;
using GeoDrive.Service.Hosting;
using GeoDrive.Service.Hosting.Windows;

ServiceOptions options;
try
{
    options = ServiceOptions.FromArgs(args);
}
catch (GeoDrive.Core.Errors.GeoDriveException ex)
{
    Console.Error.WriteLine($"error {ex.ErrorId}: {ex.FullMessage}");
    return 2;
}
var endpoint = options.Endpoint;
if (ControlListener.IsServed(endpoint))
{
    Console.Error.WriteLine($"error ServiceAlreadyRunning: a GeoDrive service already answers on '{options.SocketPath}'. Stop it first, or give this one another --socket.");
    return 2;
}

var builder = WebApplication.CreateSlimBuilder(args);
builder.Logging.ClearProviders();
builder.Logging.AddSimpleConsole(o =>
{
    o.SingleLine = true;
    o.TimestampFormat = "yyyy-MM-ddTHH:mm:ss.fffZ ";
    o.UseUtcTimestamp = true;
});
builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
builder.Logging.AddFilter("Microsoft.Hosting", LogLevel.Warning);

// The OS's parts, chosen here and nowhere else (docs/architecture.md, "The front-end contract"): FUSE on Linux; on Windows ProjFS, the
// Windows service, the Event Log and the backup exclusion (Hosting/Windows).
if (OperatingSystem.IsWindows())
{
    WindowsHosting.Configure(builder, options);
}
else
{
    builder.Services.AddSingleton(DrivePlatform.Fuse());
    // Started by systemd (docs/linux-service.md): "ready" once the socket answers, "stopping" on SIGTERM, and each
    // console line with its level for the journal. Nothing changes when anything else starts the service.
    builder.Services.AddSystemd();
}

ControlListener.Listen(builder, endpoint);
builder.Services.AddSingleton(options);
builder.Services.AddSingleton<IClock>(options.TestClockPath is { } clockFile ? new FileClock(clockFile) : SystemClock.Instance);
builder.Services.AddSingleton<DriveRegistry>();
builder.Services.AddHostedService(sp => sp.GetRequiredService<DriveRegistry>());
// The Prometheus scrape endpoint, only when --metrics-listen (or GEODRIVE_METRICS_LISTEN) names an address.
MetricsListener.AddTo(builder, options);
builder.Services.ConfigureHttpJsonOptions(o => o.SerializerOptions.PropertyNamingPolicy = System.Text.Json.JsonNamingPolicy.CamelCase);
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(30));

var app = builder.Build();
ErrorHandling.Use(app);
PeerCredentials.Use(app, options);
ControlApiRoutes.Map(app);
app.Lifetime.ApplicationStarted.Register(() =>
{
    app.Logger.LogInformation("GeoDrive service {Pid} listening on {Socket}, home {Home}", Environment.ProcessId, options.SocketPath, options.HomePath);
    if (OperatingSystem.IsWindows())
    {
        WindowsHosting.Started(app, options, app.Services.GetRequiredService<DriveRegistry>().Count);
    }
});
// The socket file goes with the service (Kestrel removes only files it bound itself; this one it was handed).
app.Lifetime.ApplicationStopped.Register(() => ControlListener.Remove(endpoint));
await app.RunAsync();
return 0;
