using System.Net.Sockets;
using GeoDrive.Core.Ports;
using GeoDrive.Service.ControlApi;
using GeoDrive.Service.Drives;
using GeoDrive.Service.Hosting;

var options = ServiceOptions.FromArgs(args);
if (ControlSocket.IsServed(options.SocketPath))
{
    Console.Error.WriteLine($"error ServiceAlreadyRunning: a GeoDrive service already answers on '{options.SocketPath}'. Stop it first, or give this one another --socket.");
    return 2;
}
ControlSocket.Prepare(options.SocketPath);

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
builder.WebHost.ConfigureKestrel(k => k.ListenUnixSocket(options.SocketPath));
builder.Services.AddSingleton(options);
builder.Services.AddSingleton<IClock>(options.TestClockPath is { } clockFile ? new FileClock(clockFile) : SystemClock.Instance);
builder.Services.AddSingleton<DriveRegistry>();
builder.Services.AddHostedService(sp => sp.GetRequiredService<DriveRegistry>());
builder.Services.ConfigureHttpJsonOptions(o => o.SerializerOptions.PropertyNamingPolicy = System.Text.Json.JsonNamingPolicy.CamelCase);
builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(30));

var app = builder.Build();
ErrorHandling.Use(app);
ControlApiRoutes.Map(app);
app.Lifetime.ApplicationStarted.Register(() =>
{
    ControlSocket.Restrict(options.SocketPath);
    app.Logger.LogInformation("GeoDrive service {Pid} listening on {Socket}, home {Home}", Environment.ProcessId, options.SocketPath, options.HomePath);
});
await app.RunAsync();
return 0;

/// <summary>The control socket: only one service per socket, and only root may connect.</summary>
internal static class ControlSocket
{
    public static bool IsServed(string path)
    {
        if (!File.Exists(path))
        {
            return false;
        }
        using var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            socket.Connect(new UnixDomainSocketEndPoint(path));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Removes a socket file left by a killed service and makes its folder.</summary>
    public static void Prepare(string path)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.Delete(path);
    }

    public static void Restrict(string path)
    {
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
    }
}
