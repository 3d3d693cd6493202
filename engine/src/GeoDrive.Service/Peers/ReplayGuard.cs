using System.Globalization;
using GeoDrive.Core.Ports;

namespace GeoDrive.Service.Peers;

/// <summary>
/// Refuses a notice sent again: its time must be within <see cref="Window"/> of this host's clock, and its nonce must
/// not have been seen within twice that window (a nonce older than that is refused by its time). Asked only after the
/// signature holds, so a forger cannot fill it; bounded all the same.
/// </summary>
public sealed class ReplayGuard(IClock clock)
{
    public static readonly TimeSpan Window = TimeSpan.FromMinutes(5);
    private const int MaxNonces = 100_000;
    private readonly Dictionary<string, DateTimeOffset> _seen = new(StringComparer.Ordinal);
    private readonly Queue<(string Nonce, DateTimeOffset Until)> _expiry = new();
    private readonly Lock _gate = new();

    /// <summary>Null when the notice is fresh (its nonce now remembered); else why it is refused.</summary>
    public string? Check(string timestamp, string nonce)
    {
        if (!long.TryParse(timestamp, NumberStyles.None, CultureInfo.InvariantCulture, out var millis))
        {
            return $"its time '{Shorten(timestamp)}' is not a Unix time in milliseconds";
        }
        var now = clock.UtcNow;
        DateTimeOffset sent;
        try
        {
            sent = DateTimeOffset.FromUnixTimeMilliseconds(millis);
        }
        catch (ArgumentOutOfRangeException)
        {
            return $"its time '{Shorten(timestamp)}' is out of range";
        }
        if ((now - sent).Duration() > Window)
        {
            return $"it was signed at {sent:u}, more than {Window.TotalMinutes:0} minutes from this host's time {now:u} (a replay, or clocks apart)";
        }
        lock (_gate)
        {
            while (_expiry.TryPeek(out var oldest) && (oldest.Until < now || _expiry.Count > MaxNonces))
            {
                _expiry.Dequeue();
                _seen.Remove(oldest.Nonce);
            }
            if (!_seen.TryAdd(nonce, now + Window + Window))
            {
                return "its nonce was seen before (the same notice sent again)";
            }
            _expiry.Enqueue((nonce, now + Window + Window));
            return null;
        }
    }

    private static string Shorten(string text) => text.Length > 40 ? text[..40] + "…" : text;
}
