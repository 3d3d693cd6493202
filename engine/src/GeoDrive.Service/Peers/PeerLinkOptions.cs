using System.Net;

namespace GeoDrive.Service.Peers;

/// <summary>One drive's peer settings as the link uses them; the tunables have defaults the tests may shorten.</summary>
internal sealed class PeerLinkOptions
{
    public required string DriveName { get; init; }
    public required string Bucket { get; init; }
    public string Prefix { get; init; } = "";
    public string[] Peers { get; init; } = [];
    public IPEndPoint? Listen { get; init; }

    /// <summary>How long changes are gathered into one notice.</summary>
    public TimeSpan BatchWindow { get; init; } = TimeSpan.FromMilliseconds(20);
    public int MaxChangesPerNotice { get; init; } = 1000;
    public int QueueCapacity { get; init; } = 100_000;
    public TimeSpan RequestTimeout { get; init; } = TimeSpan.FromSeconds(5);
    /// <summary>Tries of one notice to a peer that does not answer: 0.5, 1, 2, 4, 8, 16 s apart, about half a minute in all.</summary>
    public int MaxAttempts { get; init; } = 7;
    public TimeSpan FirstRetryDelay { get; init; } = TimeSpan.FromMilliseconds(500);
    public TimeSpan MaxRetryDelay { get; init; } = TimeSpan.FromSeconds(16);
    /// <summary>The largest notice body a listener reads.</summary>
    public const int MaxNoticeBytes = 4 * 1024 * 1024;
}
