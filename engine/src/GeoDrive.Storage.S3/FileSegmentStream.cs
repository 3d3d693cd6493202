using Microsoft.Win32.SafeHandles;

namespace GeoDrive.Storage.S3;

/// <summary>
/// One part of an open file, read in place (pread at its offset): what a multipart upload sends for a part,
/// without a buffer of the part's size and without opening the file again by its name (the engine opened it
/// beneath the cache, through no link). Seekable, so the SDK can hash it for signing and send it again on a retry.
/// </summary>
internal sealed class FileSegmentStream(SafeFileHandle file, long offset, long length) : Stream
{
    private long _position;

    public override bool CanRead => true;

    public override bool CanSeek => true;

    public override bool CanWrite => false;

    public override long Length => length;

    public override long Position
    {
        get => _position;
        set => _position = Math.Clamp(value, 0, length);
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

    public override int Read(Span<byte> buffer)
    {
        var read = RandomAccess.Read(file, Limit(buffer), offset + _position);
        _position += read;
        return read;
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        var read = await RandomAccess.ReadAsync(file, Limit(buffer), offset + _position, cancellationToken);
        _position += read;
        return read;
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override long Seek(long offset, SeekOrigin origin) => Position = origin switch
    {
        SeekOrigin.Begin => offset,
        SeekOrigin.Current => _position + offset,
        _ => length + offset,
    };

    public override void Flush()
    {
    }

    public override void SetLength(long value) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    private Span<byte> Limit(Span<byte> buffer) => buffer[..(int)Math.Min(buffer.Length, length - _position)];

    private Memory<byte> Limit(Memory<byte> buffer) => buffer[..(int)Math.Min(buffer.Length, length - _position)];
}
