using System.Reflection;
using GeoDrive.Core.Errors;
using LiteDB.Engine;

namespace GeoDrive.State.Storage;

/// <summary>
/// Waits until LiteDB's background log writer has written every queued page to the file.
/// LiteDB 5.0.x commits by queueing the transaction's log pages for a writer thread (DiskWriterQueue)
/// and returns before they reach the file; only Checkpoint and Dispose wait for that queue. A kill -9
/// right after Commit could therefore lose an acknowledged write. LiteDB exposes no public wait, so this
/// reaches its internals, pinned to LiteDB 5.0.20 (Directory.Packages.props) and checked at open so an
/// upgrade that moves them fails loudly, never silently losing durability.
/// </summary>
internal sealed class LogWriterBarrier
{
    private const BindingFlags Private = BindingFlags.Instance | BindingFlags.NonPublic;
    private const BindingFlags Public = BindingFlags.Instance | BindingFlags.Public;

    private readonly object _lazyQueue;
    private readonly PropertyInfo _isValueCreated;
    private readonly PropertyInfo _value;
    private readonly FieldInfo _queueIsEmptyField;
    private readonly FieldInfo _exceptionField;
    private readonly TimeSpan _timeout;
    private readonly LogFileStream _log;
    private volatile QueueHandle? _handle;

    private LogWriterBarrier(object lazyQueue, PropertyInfo isValueCreated, PropertyInfo value, FieldInfo queueIsEmpty, FieldInfo exception, LogFileStream log, TimeSpan timeout)
    {
        _log = log;
        _lazyQueue = lazyQueue;
        _isValueCreated = isValueCreated;
        _value = value;
        _queueIsEmptyField = queueIsEmpty;
        _exceptionField = exception;
        _timeout = timeout;
    }

    public static LogWriterBarrier For(LiteEngine engine, LogFileStream log, TimeSpan timeout)
    {
        var disk = typeof(LiteEngine).GetField("_disk", Private)?.GetValue(engine);
        var lazyQueue = disk?.GetType().GetProperty("Queue", Public)?.GetValue(disk);
        var lazyType = lazyQueue?.GetType();
        var isValueCreated = lazyType?.GetProperty("IsValueCreated", Public);
        var value = lazyType?.GetProperty("Value", Public);
        var queueType = lazyType?.GetGenericArguments().SingleOrDefault();
        var queueIsEmpty = queueType?.GetField("_queueIsEmpty", Private);
        var exception = queueType?.GetField("_exception", Private);

        if (lazyQueue is null || isValueCreated is null || value is null || queueIsEmpty?.FieldType != typeof(ManualResetEventSlim) || exception is null)
        {
            var version = typeof(LiteEngine).Assembly.GetName().Version;
            throw new InvalidOperationException(
                $"GeoDrive.State waits for LiteDB 5.0.20's log writer queue, which LiteDB {version} does not have; " +
                "without it writes are not durable when they return. Pin LiteDB to 5.0.20 or update LogWriterBarrier.");
        }

        return new LogWriterBarrier(lazyQueue, isValueCreated, value, queueIsEmpty, exception, log, timeout);
    }

    /// <summary>Returns once every page committed before the call is written to the log file and synced to disk.</summary>
    public void Wait()
    {
        var handle = _handle ?? Resolve();
        if (handle is null)
        {
            return; // The writer queue is created by the first write; nothing was ever queued.
        }

        var waited = TimeSpan.Zero;
        var step = TimeSpan.FromMilliseconds(200);
        while (!handle.IsEmpty.Wait(step))
        {
            // A failed writer thread never signals "empty" again; its exception is the real error.
            if (_exceptionField.GetValue(handle.Queue) is Exception failure)
            {
                throw IndexFailed("LiteDB's log writer failed", failure);
            }

            waited += step;
            if (waited >= _timeout)
            {
                throw IndexFailed($"LiteDB's log writer did not finish within {_timeout.TotalSeconds:0} s", null);
            }
        }

        try
        {
            _log.Sync();
        }
        catch (IOException ex)
        {
            throw IndexFailed("the log file could not be synced to disk", ex);
        }
    }

    private QueueHandle? Resolve()
    {
        if (!(bool)_isValueCreated.GetValue(_lazyQueue)!)
        {
            return null;
        }

        var queue = _value.GetValue(_lazyQueue)!;
        return _handle = new QueueHandle(queue, (ManualResetEventSlim)_queueIsEmptyField.GetValue(queue)!);
    }

    private sealed record QueueHandle(object Queue, ManualResetEventSlim IsEmpty);

    private static GeoDriveException IndexFailed(string what, Exception? inner) => new(
        ErrorIds.CachePathInvalid,
        ErrorKind.ResourceUnavailable,
        $"The drive's index could not be written: {what}.",
        "Check the cache volume (free space, I/O errors) and restart the GeoDrive service.",
        inner);
}
