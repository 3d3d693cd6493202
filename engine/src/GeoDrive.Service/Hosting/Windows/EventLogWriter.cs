using System.Diagnostics;
using System.Runtime.Versioning;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>
/// Writes <see cref="EventLogEntrySpec"/>s to the Application log under the source "GeoDrive",
/// creating the source on first start (LocalSystem may; an unelevated run says why it cannot and
/// goes on without the Event Log). A failed write never reaches the caller.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class EventLogWriter : IDisposable
{
    private readonly EventLog? _log;

    private EventLogWriter(EventLog? log, string? problem)
    {
        _log = log;
        Problem = problem;
    }

    /// <summary>Why nothing is written (no right to create the source, …); null when the log is in use.</summary>
    public string? Problem { get; }

    public static EventLogWriter Open()
    {
        try
        {
            if (!EventLog.SourceExists(EventLogEntries.SourceName))
            {
                EventLog.CreateEventSource(new EventSourceCreationData(EventLogEntries.SourceName, EventLogEntries.LogName));
            }
            return new EventLogWriter(new EventLog(EventLogEntries.LogName) { Source = EventLogEntries.SourceName }, null);
        }
        catch (Exception ex) when (ex is System.Security.SecurityException or UnauthorizedAccessException or InvalidOperationException or ArgumentException)
        {
            return new EventLogWriter(null, ex.Message);
        }
    }

    public void Write(EventLogEntrySpec entry)
    {
        if (_log is null)
        {
            return;
        }
        try
        {
            _log.WriteEntry(entry.Message, (EventLogEntryType)(int)entry.Level, entry.EventId);
        }
        catch (Exception ex) when (ex is InvalidOperationException or System.ComponentModel.Win32Exception or ArgumentException)
        {
            // The log is full or gone: the event is still in the drive's own event list (Get-CloudDriveEvent).
        }
    }

    public void Dispose() => _log?.Dispose();
}
