using System.Text;
using System.Text.RegularExpressions;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>The Event Log's entry types (the values of System.Diagnostics.EventLogEntryType).</summary>
public enum EventLogLevel
{
    Error = 1,
    Warning = 2,
    Information = 4,
}

/// <summary>One entry for the Application log under the source "GeoDrive".</summary>
public sealed record EventLogEntrySpec(EventLogLevel Level, int EventId, string Message);

/// <summary>
/// What GeoDrive writes to the Windows Event Log, and under which ids (docs/windows.md lists them).
/// Plain code, tested on every OS; <see cref="EventLogWriter"/> only hands the result to Windows.
/// Per-file successes (uploaded, stubbed, recalled, deleted, renamed, synced) are not written: a busy
/// drive has thousands an hour, and Get-CloudDriveEvent shows them. What is written is what an
/// administrator watching the log must act on, and the start and stop around it.
/// </summary>
public static partial class EventLogEntries
{
    public const string SourceName = "GeoDrive";
    public const string LogName = "Application";

    public const int ServiceStarted = 1000;
    public const int ServiceStopping = 1001;
    /// <summary>An error the service logged outside any drive's events (a drive that failed to start, a scheduler pass that threw).</summary>
    public const int ServiceError = 1100;

    public const int DriveStarted = 2000;
    public const int UploadFailed = 2001;
    public const int RecallFailed = 2002;
    public const int StubFailed = 2003;
    public const int BucketSyncFailed = 2004;
    public const int ObjectDeleteFailed = 2005;
    public const int CacheThresholdUnreachable = 2006;
    public const int DriveError = 2009;
    public const int PolicyChanged = 2010;
    public const int PolicyRefused = 2011;
    public const int CacheThresholdStubbed = 2020;

    /// <summary>The Event Log keeps at most 31,839 characters of a message; longer ones are cut here, visibly.</summary>
    public const int MaxMessageLength = 31_000;

    /// <summary>The entry for one drive event, or null when the event is not one the Event Log gets.</summary>
    public static EventLogEntrySpec? For(string driveName, DriveEvent driveEvent)
    {
        ArgumentNullException.ThrowIfNull(driveEvent);
        (EventLogLevel Level, int Id)? kind = driveEvent.Kind switch
        {
            DriveEventKind.Error => ErrorKindOf(driveEvent),
            DriveEventKind.Policy => driveEvent.ErrorId is null ? (EventLogLevel.Information, PolicyChanged) : (EventLogLevel.Warning, PolicyRefused),
            DriveEventKind.Service => (EventLogLevel.Information, DriveStarted),
            // A cache-threshold pass is one summary event without a path; a single stub has its path.
            DriveEventKind.Stub when driveEvent.Path is null => (EventLogLevel.Information, CacheThresholdStubbed),
            _ => null,
        };
        if (kind is not { } k)
        {
            return null;
        }
        var text = new StringBuilder();
        text.Append("Drive '").Append(driveName).Append("': ").Append(driveEvent.Message);
        if (driveEvent.Path is { Length: > 0 } path)
        {
            text.Append("\r\n\r\nPath: ").Append(path);
        }
        if (driveEvent.ErrorId is { Length: > 0 } errorId)
        {
            text.Append("\r\nError id: ").Append(errorId);
        }
        text.Append("\r\nTime (UTC): ").Append(driveEvent.TimeUtc.UtcDateTime.ToString("yyyy-MM-ddTHH:mm:ss.fffZ", System.Globalization.CultureInfo.InvariantCulture));
        return new EventLogEntrySpec(k.Level, k.Id, Clean(text.ToString()));
    }

    public static EventLogEntrySpec Started(string address, string home, int drives) =>
        new(EventLogLevel.Information, ServiceStarted, $"The GeoDrive service started (process {Environment.ProcessId}): control API on '{address}', state in '{home}', {drives} drive(s) defined.");

    public static EventLogEntrySpec Stopping() =>
        new(EventLogLevel.Information, ServiceStopping, "The GeoDrive service is stopping: drives are dismounted, queued uploads resume at the next start.");

    /// <summary>An error logged by the service itself: the logger's category, its message and the exception's type and message (no stack).</summary>
    public static EventLogEntrySpec Error(string category, string message, Exception? exception)
    {
        var text = $"{message}\r\n\r\nSource: {category}";
        if (exception is not null)
        {
            text += $"\r\nException: {exception.GetType().FullName}: {exception.Message}";
        }
        return new EventLogEntrySpec(EventLogLevel.Error, ServiceError, Clean(text));
    }

    /// <summary>
    /// Messages come from the engine and never carry secrets; still, an S3 client's exception text can
    /// quote a presigned URL or an Authorization header, so those parts are blanked before anything
    /// reaches a log every administrator (and every log collector) can read. Then the length is capped.
    /// </summary>
    public static string Clean(string message)
    {
        var clean = SecretPattern().Replace(message, m => m.Groups["name"].Value + "***");
        return clean.Length <= MaxMessageLength ? clean : clean[..MaxMessageLength] + " … (cut)";
    }

    private static (EventLogLevel, int) ErrorKindOf(DriveEvent e)
    {
        if (e.ErrorId == ErrorIds.CacheThresholdUnreachable)
        {
            return (EventLogLevel.Warning, CacheThresholdUnreachable);
        }
        // The engine's messages say which step failed (DriveEngine.*.cs); an unknown one is still written, as a drive error.
        var m = e.Message;
        return m switch
        {
            _ when m.StartsWith("Upload failed", StringComparison.Ordinal) => (EventLogLevel.Warning, UploadFailed),
            _ when m.StartsWith("Recall failed", StringComparison.Ordinal) => (EventLogLevel.Error, RecallFailed),
            _ when m.StartsWith("Not stubbed", StringComparison.Ordinal) => (EventLogLevel.Warning, StubFailed),
            _ when m.StartsWith("The folder was not", StringComparison.Ordinal)
                || m.StartsWith("No stub was made", StringComparison.Ordinal)
                || m.StartsWith("An object was skipped", StringComparison.Ordinal) => (EventLogLevel.Warning, BucketSyncFailed),
            _ when m.StartsWith("Could not delete the object", StringComparison.Ordinal) => (EventLogLevel.Warning, ObjectDeleteFailed),
            _ => (EventLogLevel.Error, DriveError),
        };
    }

    // Query parameters and headers that carry a signature, a credential scope or a token, and
    // "secret"-named values in key=value or JSON form.
    [GeneratedRegex("""(?<name>(?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|AWSAccessKeyId|Signature|Credential)=|Authorization:\s*|"?(?:secret[_-]?(?:access[_-]?)?key|secretKey|SecretAccessKey|password)"?\s*[:=]\s*"?)[^\s&",;]+""", RegexOptions.IgnoreCase)]
    private static partial Regex SecretPattern();
}
