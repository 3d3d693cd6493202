using System.Collections.Concurrent;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Passes every call on to the real engine and remembers who made each open and listing: the caller's image name is
/// asked for as the call comes, as an engine with process rules asks (the mount reads it only then). With
/// <see cref="CloseDelay"/> set it stands for a slow engine too: a close is passed on only once that task ends.
/// </summary>
public sealed class CallerRecorder(IDriveFileSystem engine) : IDriveFileSystem
{
    public ConcurrentQueue<(string Operation, string Path, Caller Caller)> Calls { get; } = new();

    public string CachePath => engine.CachePath;

    private static Caller Named(Caller caller) => new(caller.ProcessId, caller.ImageName, caller.IsSystem);

    public ValueTask BeforeEnumerateAsync(string path, Caller caller, CancellationToken cancellationToken = default)
    {
        Calls.Enqueue(("enumerate", path, Named(caller)));
        return engine.BeforeEnumerateAsync(path, caller, cancellationToken);
    }

    public ValueTask<bool> LookupMissingAsync(string path, Caller caller, CancellationToken cancellationToken = default) =>
        engine.LookupMissingAsync(path, caller, cancellationToken);

    public ValueTask<OpenDecision> OpenAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default)
    {
        Calls.Enqueue(("open", path, Named(caller)));
        return engine.OpenAsync(path, caller, intent, cancellationToken);
    }

    /// <summary>Raised as an open of a path (through the mount's streaming open) reaches the engine.</summary>
    public event Action<string>? Opening;

    public ValueTask<OpenDecision> OpenStreamingAsync(string path, Caller caller, OpenIntent intent, CancellationToken cancellationToken = default)
    {
        Calls.Enqueue(("open", path, Named(caller)));
        Opening?.Invoke(path);
        return engine.OpenStreamingAsync(path, caller, intent, cancellationToken);
    }

    public ValueTask WaitForRangeAsync(string path, long offset, long length, CancellationToken cancellationToken = default) =>
        engine.WaitForRangeAsync(path, offset, length, cancellationToken);

    public ValueTask<int> ReadStreamedAsync(string path, long offset, Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        engine.ReadStreamedAsync(path, offset, buffer, cancellationToken);

    public ValueTask<bool> FlushedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default)
    {
        Calls.Enqueue(("flush", path, caller));
        return engine.FlushedAsync(path, caller, modified, cancellationToken);
    }

    /// <summary>What a close of a path waits for before the engine hears of it (null: nothing).</summary>
    public Func<string, Task>? CloseDelay { get; set; }

    public async ValueTask ClosedAsync(string path, Caller caller, bool modified, CancellationToken cancellationToken = default)
    {
        await DelayClose(path);
        Calls.Enqueue(("closed", path, caller));
        await engine.ClosedAsync(path, caller, modified, cancellationToken);
    }

    public async ValueTask ClosedWrittenAsync(string path, Caller caller, WrittenDigest written, CancellationToken cancellationToken = default)
    {
        await DelayClose(path);
        Calls.Enqueue(("closed", path, caller));
        await engine.ClosedWrittenAsync(path, caller, written, cancellationToken);
    }

    private Task DelayClose(string path) => CloseDelay?.Invoke(path) ?? Task.CompletedTask;

    public void Created(string path, Caller caller, bool isDirectory) => engine.Created(path, caller, isDirectory);

    public void Refused(string path, Caller caller, Core.Errors.GeoDriveException reason) => engine.Refused(path, caller, reason);

    public void Deleted(string path, Caller caller, bool isDirectory) => engine.Deleted(path, caller, isDirectory);

    public void Renamed(string oldPath, string newPath, Caller caller, bool isDirectory) => engine.Renamed(oldPath, newPath, caller, isDirectory);

    public string? GetStateAttribute(string path) => engine.GetStateAttribute(path);

    public bool IsInternalPath(string path) => engine.IsInternalPath(path);

    public bool NamesIgnoreCase => engine.NamesIgnoreCase;

    public bool ClosesUpload => engine.ClosesUpload;
}
