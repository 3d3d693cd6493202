using System.Globalization;
using GeoDrive.Core.Ports;

namespace GeoDrive.Service.Hosting;

/// <summary>
/// TEST ONLY (--test-clock FILE): the service's "now" is the ISO-8601 time written in FILE, so an
/// end-to-end test can move the clock of a real service process (schedules, access wait, settle)
/// without waiting. Re-read when the file changes; a file that is missing or unreadable leaves the last time.
/// Never use it on a real drive: time stands still until the file is written.
/// </summary>
public sealed class FileClock : IClock
{
    private readonly string _path;
    private readonly Lock _gate = new();
    private DateTime _readStamp;
    private DateTimeOffset _now;

    public FileClock(string path)
    {
        _path = Path.GetFullPath(path);
        _now = Read() ?? throw new InvalidOperationException($"--test-clock: '{_path}' must hold an ISO-8601 time, e.g. 2026-01-05T09:00:00Z.");
    }

    public DateTimeOffset UtcNow
    {
        get
        {
            lock (_gate)
            {
                var stamp = File.Exists(_path) ? File.GetLastWriteTimeUtc(_path) : default;
                if (stamp != _readStamp && Read() is { } now)
                {
                    _readStamp = stamp;
                    _now = now;
                }
                return _now;
            }
        }
    }

    private DateTimeOffset? Read()
    {
        try
        {
            var text = File.ReadAllText(_path).Trim();
            return DateTimeOffset.TryParse(text, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out var time) ? time.ToUniversalTime() : null;
        }
        catch (IOException)
        {
            return null;
        }
    }
}
