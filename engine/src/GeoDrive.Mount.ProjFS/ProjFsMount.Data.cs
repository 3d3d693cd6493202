using System.Buffers;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Naming;
using GeoDrive.Mount.ProjFS.Projection;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.ProjFS;

/// <summary>Placeholders and their data: answered "pending" and completed when the bucket has answered.</summary>
public sealed partial class ProjFsMount
{
    private readonly HashSet<string> _streamed = new(ProjFsNameComparer.Instance);

    /// <summary>A name ProjFS does not have on disk: write its placeholder if the index (or, after a lookup, the bucket) has it.</summary>
    internal int GetPlaceholderInfo(string path, int commandId, Caller caller)
    {
        if (path.Length == 0 || _drive.IsInternalPath(path))
        {
            return HResult.FileNotFound;
        }
        if (_projection.Find(path) is { } known)
        {
            return WritePlaceholder(known);
        }
        // Not in the index: asking the bucket can take a while, so ProjFS is told "pending".
        return RunPending(commandId, path, async token =>
        {
            if (!await _drive.LookupMissingAsync(path, caller, token) || _projection.Find(path) is not { } found)
            {
                return HResult.FileNotFound;
            }
            return WritePlaceholder(found);
        });
    }

    internal unsafe int WritePlaceholder(ProjectedItem item)
    {
        var info = PlaceholderInfo(item);
        return ProjectedFsLib.WritePlaceholderInfo(_context, Native(item.Path), &info, (uint)sizeof(PrjPlaceholderInfo));
    }

    internal static unsafe PrjPlaceholderInfo PlaceholderInfo(ProjectedItem item)
    {
        var info = new PrjPlaceholderInfo { FileBasicInfo = BasicInfo(item) };
        Copy(PlaceholderIds.ProviderId, info.VersionInfo.ProviderId);
        Copy(item.ContentId, info.VersionInfo.ContentId);
        return info;
    }

    private static unsafe void Copy(byte[] id, byte* destination)
    {
        var span = new Span<byte>(destination, PlaceholderIds.Length);
        span.Clear();
        id.AsSpan(0, Math.Min(id.Length, PlaceholderIds.Length)).CopyTo(span);
    }

    /// <summary>
    /// ProjFS needs a placeholder's bytes (first read, or a write that hydrates first). The caller's
    /// process rule decides; the bytes come from the bucket in aligned chunks, several at once.
    /// </summary>
    internal int GetFileData(string path, int commandId, Guid dataStreamId, string contentId, long offset, uint length, Caller caller)
    {
        if (_drive.IsInternalPath(path) || _projection.Find(path) is not { IsDirectory: false } item)
        {
            return HResult.FileNotFound;
        }
        if (contentId.Length > 0 && contentId != PlaceholderIds.Decode(item.ContentId))
        {
            // The placeholder was written for another version of the object; its bytes are not these.
            _logger.LogWarning("Placeholder of {Path} is for version {Old}, the bucket has {New}", path, contentId, PlaceholderIds.Decode(item.ContentId));
            return HResult.FileNotFound;
        }
        return RunPending(commandId, path, async token =>
        {
            var decision = await _gate.DecideRecallAsync(path, caller, token);
            if (decision == OpenDecision.Deny)
            {
                throw new GeoDriveException(ErrorIds.RecallDenied, ErrorKind.PermissionDenied,
                    $"The process rule for '{caller.ImageName}' denies recalls of '{path}'.", "Change processExcludes in the drive's policy.");
            }
            await WriteDataAsync(path, dataStreamId, offset, length, item.Size, token);
            if (offset + length >= item.Size)
            {
                if (decision == OpenDecision.Stream)
                {
                    lock (_streamed)
                    {
                        _streamed.Add(path);
                    }
                }
                else
                {
                    _gate.Hydrated(path, caller);
                    // Now Cached: the open that asked for the data is registered with the engine, as any open of a local file.
                    if (_open.IsOpen(path))
                    {
                        await _drive.OpenAsync(path, caller, OpenIntent.Read, token);
                    }
                }
            }
            return HResult.Ok;
        });
    }

    private async Task WriteDataAsync(string path, Guid dataStreamId, long offset, uint length, long fileSize, CancellationToken token)
    {
        var chunks = FileDataPlan.Chunks(offset, length, fileSize, _options.ChunkSize);
        await Parallel.ForEachAsync(chunks, new ParallelOptions { MaxDegreeOfParallelism = Math.Max(1, _options.DataThreads), CancellationToken = token },
            async (chunk, ct) =>
            {
                var rented = ArrayPool<byte>.Shared.Rent(chunk.Length);
                try
                {
                    var total = 0;
                    while (total < chunk.Length)
                    {
                        var n = await _drive.ReadStreamedAsync(path, chunk.Offset + total, rented.AsMemory(total, chunk.Length - total), ct);
                        if (n == 0)
                        {
                            throw new GeoDriveException(ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
                                $"The bucket's object for '{path}' ended at {chunk.Offset + total} bytes, before the size the index records.",
                                "Check who else writes to the bucket; the file stays a stub.");
                        }
                        total += n;
                    }
                    WriteChunk(dataStreamId, rented, chunk);
                }
                finally
                {
                    ArrayPool<byte>.Shared.Return(rented);
                }
            });
    }

    private unsafe void WriteChunk(Guid dataStreamId, byte[] bytes, DataChunk chunk)
    {
        var aligned = ProjectedFsLib.AllocateAlignedBuffer(_context, (nuint)chunk.Length);
        if (aligned is null)
        {
            throw new IOException("PrjAllocateAlignedBuffer returned no buffer (out of memory).", HResult.OutOfMemory);
        }
        try
        {
            bytes.AsSpan(0, chunk.Length).CopyTo(new Span<byte>(aligned, chunk.Length));
            var result = ProjectedFsLib.WriteFileData(_context, &dataStreamId, aligned, (ulong)chunk.Offset, (uint)chunk.Length);
            if (result != HResult.Ok)
            {
                throw new IOException($"PrjWriteFileData failed with 0x{result:X8}", result);
            }
        }
        finally
        {
            ProjectedFsLib.FreeAlignedBuffer(aligned);
        }
    }

    /// <summary>
    /// Runs <paramref name="work"/> after answering ERROR_IO_PENDING; completes the command with its
    /// result unless ProjFS cancelled it meanwhile (CancelCommand), which also cancels the work.
    /// </summary>
    private int RunPending(int commandId, string path, Func<CancellationToken, Task<int>> work)
    {
        var token = _pending.Begin(commandId, _stopping.Token);
        _ = Task.Run(async () =>
        {
            int result;
            try
            {
                result = await work(token);
            }
            catch (Exception ex)
            {
                result = Fail(path, ex);
            }
            if (_pending.End(commandId) && Volatile.Read(ref _stopped) == 0)
            {
                CompleteCommand(commandId, result);
            }
        }, CancellationToken.None);
        return HResult.IoPending;
    }

    private unsafe void CompleteCommand(int commandId, int result)
    {
        var completed = ProjectedFsLib.CompleteCommand(_context, commandId, result, null);
        if (completed != HResult.Ok)
        {
            _logger.LogWarning("PrjCompleteCommand({Command}) failed with 0x{Result:X8}", commandId, completed);
        }
    }

    internal void CancelCommand(int commandId) => _pending.Cancel(commandId);
}
