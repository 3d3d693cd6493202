namespace GeoDrive.State.Storage;

/// <summary>
/// LiteDB's write-ahead log file, given to LiteDB as a plain <see cref="Stream"/> so that its writer's
/// flushes reach the OS (enough for a killed process: the page cache outlives it) but do not fsync.
/// LiteDB 5.0.20 fsyncs a <see cref="FileStream"/> every time its writer queue runs dry, which under a
/// stream of small commits was several fsyncs per file written through the mount; the index instead
/// fsyncs once per wait for durability (<see cref="LogWriterBarrier.Wait"/>), covering every page
/// written before it. Unbuffered: a LiteDB write is in the OS when Write returns.
/// </summary>
internal sealed class LogFileStream : Stream
{
    private readonly FileStream _file;
    private readonly Lock _syncGate = new();
    private volatile bool _unsynced;

    public LogFileStream(string path)
    {
        _file = new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, bufferSize: 0, FileOptions.RandomAccess);
    }

    public override bool CanRead => true;

    public override bool CanSeek => true;

    public override bool CanWrite => true;

    public override long Length => _file.Length;

    public override long Position
    {
        get => _file.Position;
        set => _file.Position = value;
    }

    public override int Read(byte[] buffer, int offset, int count) => _file.Read(buffer, offset, count);

    public override int Read(Span<byte> buffer) => _file.Read(buffer);

    public override long Seek(long offset, SeekOrigin origin) => _file.Seek(offset, origin);

    public override void Write(byte[] buffer, int offset, int count)
    {
        _file.Write(buffer, offset, count);
        _unsynced = true;
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        _file.Write(buffer);
        _unsynced = true;
    }

    public override void SetLength(long value)
    {
        _file.SetLength(value);
        _unsynced = true;
    }

    /// <summary>LiteDB's flush: to the OS only (nothing is buffered here).</summary>
    public override void Flush() => _file.Flush(flushToDisk: false);

    /// <summary>Makes every write made before the call durable; one fsync serves all callers waiting meanwhile.</summary>
    public void Sync()
    {
        if (!_unsynced)
        {
            return;
        }
        lock (_syncGate)
        {
            // Cleared before the fsync, and set by writers after their write: a write that completes after
            // this point sets it again, so its own caller's Sync does not return early.
            if (!_unsynced)
            {
                return;
            }
            _unsynced = false;
            _file.Flush(flushToDisk: true);
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _file.Dispose();
        }
        base.Dispose(disposing);
    }
}
