using System.Runtime.Versioning;
using GeoDrive.Api;
using GeoDrive.Service.FrontEnds;
using Microsoft.Extensions.Logging.EventLog;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>
/// Everything the service does differently on Windows, registered once at start-up: it runs as the
/// Windows service "GeoDrive" when the Service Control Manager starts it (a console program
/// otherwise), serves drives through ProjFS, writes drive events and its own errors to the
/// Application log, and keeps each drive's FilesNotToBackup value.
/// </summary>
[SupportedOSPlatform("windows")]
public static class WindowsHosting
{
    /// <summary>The name the service is installed under (sc.exe create GeoDrive …).</summary>
    public const string ServiceName = "GeoDrive";

    public static void Configure(WebApplicationBuilder builder, ServiceOptions options)
    {
        // A no-op unless the SCM started this process: then the host answers the SCM's start and stop.
        builder.Host.UseWindowsService(o => o.ServiceName = ServiceName);
        // UseWindowsService adds Microsoft's Event Log logger (every warning, event id 0); GeoDrive writes its own entries, with ids.
        builder.Logging.AddFilter<EventLogLoggerProvider>(_ => false);

        var eventLog = EventLogWriter.Open();
        builder.Services.AddSingleton(eventLog);
        builder.Logging.AddProvider(new EventLogErrorLoggerProvider(eventLog));
        builder.Services.AddSingleton(sp => new DrivePlatform
        {
            FrontEnd = DriveFrontEnds.ForThisMachine(options.HomePath),
            DriveEvents = (drive, driveEvent) =>
            {
                // Called on the engine's recording thread: an outlet's trouble must never fail a drive's work.
                try
                {
                    if (EventLogEntries.For(drive, driveEvent) is { } entry)
                    {
                        eventLog.Write(entry);
                    }
                }
                catch (Exception)
                {
                }
            },
            Backup = new BackupExclusionRegistry(sp.GetRequiredService<ILoggerFactory>().CreateLogger("GeoDrive.Service")),
        });
    }

    /// <summary>Once the control API listens: the start entry, or why the Event Log cannot be used.</summary>
    public static void Started(WebApplication app, ServiceOptions options, int drives)
    {
        var eventLog = app.Services.GetRequiredService<EventLogWriter>();
        if (eventLog.Problem is { } problem)
        {
            app.Logger.LogWarning("The Event Log source '{Source}' is not available ({Problem}); events go to the console log only. Run the service as LocalSystem, or create the source once elevated (docs/windows.md)",
                EventLogEntries.SourceName, problem);
        }
        eventLog.Write(EventLogEntries.Started(options.SocketPath, options.HomePath, drives));
        app.Lifetime.ApplicationStopping.Register(() => eventLog.Write(EventLogEntries.Stopping()));
    }
}
