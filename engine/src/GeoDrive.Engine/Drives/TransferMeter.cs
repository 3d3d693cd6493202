namespace GeoDrive.Engine.Drives;

/// <summary>
/// What a drive's transfers have done and are doing: totals since start, bytes in flight, and rates
/// over the last <see cref="Window"/> (Get-CloudDriveStatus, the seed's transfer status window).
/// Rates come from samples taken at each <see cref="Snapshot"/>, with the engine's clock.
/// </summary>
public sealed class TransferMeter
{
    public static readonly TimeSpan Window = TimeSpan.FromSeconds(10);

    private readonly Lock _gate = new();
    private readonly Queue<(DateTimeOffset At, long Uploaded, long Recalled)> _samples = new();
    private long _uploadedFiles;
    private long _uploadedBytes;
    private long _recalledFiles;
    private long _recalledBytes;
    private long _uploadingBytes;
    private long _recallingBytes;

    public void UploadStarted(long bytes) => Interlocked.Add(ref _uploadingBytes, bytes);

    public void UploadEnded(long bytes) => Interlocked.Add(ref _uploadingBytes, -bytes);

    /// <summary>A file's upload was verified in the bucket.</summary>
    public void Uploaded(long bytes)
    {
        Interlocked.Increment(ref _uploadedFiles);
        Interlocked.Add(ref _uploadedBytes, bytes);
    }

    public void RecallStarted(long bytes) => Interlocked.Add(ref _recallingBytes, bytes);

    public void RecallEnded(long bytes) => Interlocked.Add(ref _recallingBytes, -bytes);

    /// <summary>A stub's data came back and was verified.</summary>
    public void Recalled(long bytes)
    {
        Interlocked.Increment(ref _recalledFiles);
        Interlocked.Add(ref _recalledBytes, bytes);
    }

    /// <summary>Totals and bytes in flight as they are, without taking a sample for the rates (metrics read them this way).</summary>
    public TransferTotals Totals() => new(
        Interlocked.Read(ref _uploadedFiles), Interlocked.Read(ref _uploadedBytes), Interlocked.Read(ref _recalledFiles),
        Interlocked.Read(ref _recalledBytes), Interlocked.Read(ref _uploadingBytes), Interlocked.Read(ref _recallingBytes));

    /// <summary>Takes a sample at <paramref name="now"/> and reports totals, bytes in flight and rates over the window.</summary>
    public TransferSnapshot Snapshot(DateTimeOffset now)
    {
        var uploaded = Interlocked.Read(ref _uploadedBytes);
        var recalled = Interlocked.Read(ref _recalledBytes);
        double uploadRate = 0, recallRate = 0;
        lock (_gate)
        {
            _samples.Enqueue((now, uploaded, recalled));
            while (_samples.Count > 1 && now - _samples.Peek().At > Window)
            {
                _samples.Dequeue();
            }
            var oldest = _samples.Peek();
            var seconds = (now - oldest.At).TotalSeconds;
            if (seconds > 0)
            {
                uploadRate = (uploaded - oldest.Uploaded) / seconds;
                recallRate = (recalled - oldest.Recalled) / seconds;
            }
        }
        return new TransferSnapshot(
            Interlocked.Read(ref _uploadedFiles), uploaded, Interlocked.Read(ref _recalledFiles), recalled,
            Interlocked.Read(ref _uploadingBytes), Interlocked.Read(ref _recallingBytes), uploadRate, recallRate);
    }
}

/// <summary>Totals since the drive started and bytes in flight now.</summary>
public sealed record TransferTotals(
    long UploadedFiles, long UploadedBytes, long RecalledFiles, long RecalledBytes, long UploadingBytes, long RecallingBytes);

/// <summary>Totals since the drive started, bytes in flight now, and bytes per second over the last window.</summary>
public sealed record TransferSnapshot(
    long UploadedFiles, long UploadedBytes, long RecalledFiles, long RecalledBytes,
    long UploadingBytes, long RecallingBytes, double UploadBytesPerSecond, double RecallBytesPerSecond);
