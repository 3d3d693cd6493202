using System.Runtime.Versioning;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>
/// The service's own errors (a drive that could not start, a scheduler pass or a ProjFS request that
/// threw) as Event Log entries with id 1100. Drive events reach the log through their own mapping,
/// and the engine logs those as warnings, so nothing is written twice.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class EventLogErrorLoggerProvider(EventLogWriter eventLog) : ILoggerProvider
{
    public ILogger CreateLogger(string categoryName) => new ErrorLogger(categoryName, eventLog);

    public void Dispose()
    {
    }

    private sealed class ErrorLogger(string category, EventLogWriter eventLog) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) =>
            logLevel >= LogLevel.Error && logLevel != LogLevel.None && category.StartsWith("GeoDrive", StringComparison.Ordinal);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                eventLog.Write(EventLogEntries.Error(category, formatter(state, exception), exception));
            }
        }
    }
}
