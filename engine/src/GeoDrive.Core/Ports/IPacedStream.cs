namespace GeoDrive.Core.Ports;

/// <summary>
/// A stream that paces what passes through it (a drive's bandwidth limit) over a source it reads from. A store that
/// sends a file in parts reads each part from <see cref="Source"/> at its offset and sends it through
/// <see cref="Pace"/>, so the wire itself keeps the pace (a part read whole through the limit and then sent went out
/// in one burst at full speed: docs/decisions/0033-throttled-parts-paced-on-the-wire.md).
/// </summary>
public interface IPacedStream
{
    /// <summary>What this stream reads from, unpaced.</summary>
    Stream Source { get; }

    /// <summary><paramref name="part"/> read through the same pace (shared with every other stream of the limit); disposing it disposes the part.</summary>
    Stream Pace(Stream part);
}
