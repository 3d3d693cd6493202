namespace GeoDrive.Engine.Files;

/// <summary>
/// One direction's bandwidth limit, shared by every transfer of a drive: a token bucket refilled at
/// the rate in force (0 = unlimited) holding at most one second of it, so a busy machine's late
/// wake-ups are made up rather than lost, and the rate holds over any second or longer. The rate comes
/// from the policy at the engine's clock (schedule windows); the pacing waits in real time, as any
/// limiter must (<paramref name="time"/>, the system's unless a test moves it). Each wait it imposes is told to
/// <paramref name="waited"/> (the drive's metrics).
/// </summary>
public sealed class Throttle(Func<long> bytesPerSecond, Action<TimeSpan>? waited = null, TimeProvider? time = null)
{
    private readonly Lock _gate = new();
    private readonly TimeProvider _time = time ?? TimeProvider.System;
    private readonly long _start = (time ?? TimeProvider.System).GetTimestamp();
    private double _tokens;
    private double _lastSeconds;

    /// <summary>Waits until <paramref name="bytes"/> may pass.</summary>
    public async ValueTask TakeAsync(int bytes, CancellationToken cancellationToken)
    {
        var rate = bytesPerSecond();
        if (rate <= 0 || bytes <= 0)
        {
            return;
        }
        TimeSpan wait;
        lock (_gate)
        {
            var now = _time.GetElapsedTime(_start).TotalSeconds;
            _tokens = Math.Min(rate, _tokens + (now - _lastSeconds) * rate);
            _lastSeconds = now;
            _tokens -= bytes;
            wait = _tokens >= 0 ? TimeSpan.Zero : TimeSpan.FromSeconds(-_tokens / rate);
        }
        if (wait > TimeSpan.Zero)
        {
            waited?.Invoke(wait);
            await Task.Delay(wait, _time, cancellationToken);
        }
    }
}

/// <summary>
/// A stream whose reads (uploads) or writes (recalls) pass through a <see cref="Throttle"/> in small slices. A seekable
/// inner stream stays seekable (a request sent again reads its body again, and pays for it again).
/// </summary>
public sealed class ThrottledStream(Stream inner, Throttle throttle) : Stream, Core.Ports.IPacedStream
{
    Stream Core.Ports.IPacedStream.Source => inner;

    Stream Core.Ports.IPacedStream.Pace(Stream part) => new ThrottledStream(part, throttle);

    // Slices keep one large read from bursting far past the limit.
    private const int Slice = 64 * 1024;

    public override bool CanRead => inner.CanRead;
    public override bool CanSeek => inner.CanSeek;
    public override bool CanWrite => inner.CanWrite;
    public override long Length => inner.Length;
    public override long Position { get => inner.Position; set => inner.Position = value; }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var slice = buffer[..Math.Min(buffer.Length, Slice)];
        var n = await inner.ReadAsync(slice, cancellationToken);
        await throttle.TakeAsync(n, cancellationToken);
        return n;
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        for (var offset = 0; offset < buffer.Length; offset += Slice)
        {
            var slice = buffer.Slice(offset, Math.Min(Slice, buffer.Length - offset));
            await throttle.TakeAsync(slice.Length, cancellationToken);
            await inner.WriteAsync(slice, cancellationToken);
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count).GetAwaiter().GetResult();

    public override void Write(byte[] buffer, int offset, int count) => WriteAsync(buffer, offset, count).GetAwaiter().GetResult();

    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

    public override void Flush() => inner.Flush();

    public override long Seek(long offset, SeekOrigin origin) => inner.Seek(offset, origin);

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            inner.Dispose();
        }
        base.Dispose(disposing);
    }
}
