using System.Buffers;
using System.Runtime.InteropServices;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Mount.Fuse.Native;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Mount.Fuse;

/// <summary>File data: open, create, read, write, truncate, flush to disk, close.</summary>
public sealed partial class FuseMount
{
    internal int Open(string fusePath, int flags, out OpenAnswer answer) => OpenNamed(Named(fusePath), flags, out answer);

    /// <summary>
    /// Opens <paramref name="path"/>; <paramref name="answer"/> says, besides our handle, whether the kernel reads it from
    /// the cache file itself (FUSE passthrough, <see cref="OpenFiles.Choose"/>), and whether its close needs a flush:
    /// only a change, in sync mode, is handed over at a flush (<see cref="IDriveFileSystem.ClosesUpload"/>), so a reader's
    /// close, and any close in async mode, spares the service that request.
    /// </summary>
    private int OpenNamed(string path, int flags, out OpenAnswer answer)
    {
        answer = default;
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        var access = flags & LibC.OAccMode;
        var truncating = (flags & LibC.OTrunc) != 0 && access != LibC.ORdOnly;
        var intent = truncating ? OpenIntent.Truncate : access == LibC.ORdOnly ? OpenIntent.Read : OpenIntent.Write;
        var caller = CurrentCaller();

        // Counted before the engine hears of it, so another handle's close cannot report "closed" meanwhile.
        var target = _open.Acquire(path);
        OpenDecision decision;
        try
        {
            decision = Wait(_drive.OpenStreamingAsync(path, caller, intent));
        }
        catch (GeoDriveException ex) when (ex.Kind == ErrorKind.ConnectionError)
        {
            // Only a recall waits on the bucket at open: its data could not be had, an I/O error as at read.
            // Why (the error id and remedy) is in the drive's events and the log.
            ReleaseAndReport(target, modified: false, caller);
            _logger.LogWarning("Open of {Path} failed, its recall did not complete: {Message} ({ErrorId})", path, ex.Message, ex.ErrorId);
            return -Errno.EIO;
        }
        catch
        {
            ReleaseAndReport(target, modified: false, caller);
            throw;
        }

        switch (decision)
        {
            case OpenDecision.Deny:
            case OpenDecision.Stream when access != LibC.ORdOnly:
                ReleaseAndReport(target, modified: false, caller);
                return -Errno.EACCES;
            case OpenDecision.Stream:
                answer = new OpenAnswer(_open.Add(new OpenFile(target, -1, streamed: true)), NoFlush: true);
                return 0;
        }

        var descriptor = _cache.Open(path, flags & ~(LibC.OCreat | LibC.OExcl), 0);
        if (descriptor < 0)
        {
            var errno = descriptor;
            ReleaseAndReport(target, modified: false, caller);
            return errno;
        }
        if (truncating)
        {
            _open.MarkModified(target);
        }
        if (access != LibC.ORdOnly && (truncating || LibC.LSeek(descriptor, 0, LibC.SeekEnd) == 0))
        {
            // Empty (cut by this open, or before it: the kernel sends a truncation of its own first unless it hands
            // O_TRUNC over): what is written from here can be hashed as it comes.
            _open.Emptied(target);
        }
        var mode = _open.Choose(target, readOnlyLocal: access == LibC.ORdOnly && decision == OpenDecision.Local,
            () => _passthrough.Register(descriptor), out var backingId);
        var handle = _open.Add(new OpenFile(target, descriptor, streamed: false, recalling: decision == OpenDecision.Recalling, mode));
        answer = new OpenAnswer(handle, mode, backingId, NoFlush: access == LibC.ORdOnly || !_drive.ClosesUpload,
            Uncached: OpenAnswer.UncachedFor(flags, mode));
        return 0;
    }

    internal int Create(string fusePath, uint mode, int flags, out OpenAnswer answer)
    {
        answer = default;
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.EACCES;
        }
        if (_names is not null && path != Relative(fusePath) && _names.Exists(path))
        {
            // The name exists in another case (the kernel still held this one as missing): the existing file is opened, as NTFS does.
            return (flags & LibC.OExcl) != 0 ? -Errno.EEXIST : OpenNamed(path, flags, out answer);
        }
        if (RefusedAsTooLong(path))
        {
            return -Errno.ENAMETOOLONG;
        }
        // Made here, or (the name appeared in the cache since the kernel looked it up) opened as open(2) would: only a file
        // made here takes the mode asked for.
        var descriptor = _cache.Open(path, flags | LibC.OCreat | LibC.OExcl, mode);
        var made = descriptor >= 0;
        if (descriptor == -Errno.EEXIST && (flags & LibC.OExcl) == 0)
        {
            descriptor = _cache.Open(path, flags | LibC.OCreat, mode);
        }
        if (descriptor < 0)
        {
            return descriptor;
        }
        if (made)
        {
            WarnIfNarrowed(path, mode, CacheFolder.KeepPermissions(descriptor, mode));
        }
        SetOwnerToCaller(path);
        var caller = CurrentCaller();
        var target = _open.Acquire(path);
        _open.MarkModified(target);
        if (made || (flags & LibC.OTrunc) != 0)
        {
            _open.Emptied(target);
        }
        try
        {
            _drive.Created(path, caller, isDirectory: false);
            Wait(_drive.OpenAsync(path, caller, OpenIntent.Write));
        }
        catch
        {
            LibC.Close(descriptor);
            ReleaseAndReport(target, modified: true, caller);
            throw;
        }
        // Served, unless the name was open in passthrough meanwhile (made in the cache folder since the kernel looked).
        var openMode = _open.Choose(target, readOnlyLocal: false, static () => 0, out var backingId);
        answer = new OpenAnswer(_open.Add(new OpenFile(target, descriptor, streamed: false, mode: openMode)), openMode, backingId,
            NoFlush: !_drive.ClosesUpload, Uncached: OpenAnswer.UncachedFor(flags, openMode));
        return 0;
    }

    /// <summary>
    /// A read, answered (in <paramref name="answer"/>, allocated here and freed by libfuse) with the cache file's
    /// descriptor and the range's offset rather than its bytes: libfuse splices them from the page cache into /dev/fuse
    /// where the kernel allows (FUSE_CAP_SPLICE_WRITE, reads of two pages and more), else reads them itself. The
    /// service copies no byte of a local file out and back in. A file streamed from the bucket is answered from memory.
    /// </summary>
    internal unsafe int ReadBuf(ulong handle, FuseBufVec** answer, int size, long offset)
    {
        if (_open.Get(handle) is not { } file)
        {
            return -Errno.EBADF;
        }
        Interlocked.Increment(ref _readsServed);
        var vector = (FuseBufVec*)NativeMemory.AllocZeroed((nuint)sizeof(FuseBufVec));
        *answer = vector;
        vector->Count = 1;
        if (file.Streamed)
        {
            vector->Buf.Mem = (byte*)NativeMemory.Alloc((nuint)Math.Max(1, size));
            var read = ReadStreamed(file, vector->Buf.Mem, size, offset);
            vector->Buf.Size = (nuint)Math.Max(0, read);
            return Math.Min(0, read);
        }
        if (file.Recalling)
        {
            // Streaming recall: the bytes are served from the cache file once their range has arrived.
            try
            {
                Wait(_drive.WaitForRangeAsync(file.Target.Path, offset, size));
            }
            catch (GeoDriveException ex)
            {
                // The file's bytes could not be had, whatever the cause: an I/O error, as a failed disk read is.
                // Why (the error id and remedy) is in the drive's events and the log.
                _logger.LogWarning("Read of {Path} failed, its recall did not complete: {Message} ({ErrorId})", file.Target.Path, ex.Message, ex.ErrorId);
                return -Errno.EIO;
            }
        }
        // FUSE takes a short read for the end of the file: libfuse reads (or splices) up to size, and the file's end cuts it.
        vector->Buf.Flags = FuseBuf.IsFd | FuseBuf.FdSeek;
        vector->Buf.Fd = file.Descriptor;
        vector->Buf.Pos = offset;
        vector->Buf.Size = (nuint)size;
        return 0;
    }

    private unsafe int ReadStreamed(OpenFile file, byte* buffer, int size, long offset)
    {
        var rented = ArrayPool<byte>.Shared.Rent(size);
        try
        {
            var total = 0;
            while (total < size)
            {
                var n = Wait(_drive.ReadStreamedAsync(file.Target.Path, offset + total, rented.AsMemory(total, size - total)));
                if (n == 0)
                {
                    break;
                }
                total += n;
            }
            Marshal.Copy(rented, 0, (nint)buffer, total);
            return total;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    internal unsafe int Write(ulong handle, byte* buffer, int size, long offset)
    {
        if (_open.Get(handle) is not { } file || file.Streamed)
        {
            return -Errno.EBADF;
        }
        if (!_space.Allows(size))
        {
            return -Errno.ENOSPC;
        }
        _open.MarkModified(file.Target);
        var total = 0;
        while (total < size)
        {
            var n = LibC.PWrite(file.Descriptor, buffer + total, (nuint)(size - total), offset + total);
            if (n < 0)
            {
                var errno = LibC.NegativeErrno();
                // Some of it may have reached the file: what the file holds is no longer known here.
                file.Target.Digest?.End();
                return errno;
            }
            total += (int)n;
        }
        file.Target.Digest?.Written(offset, new ReadOnlySpan<byte>(buffer, total));
        return total;
    }

    internal int Truncate(string? fusePath, long size, ulong handle)
    {
        if (handle != 0 && _open.Get(handle) is { Streamed: false } file)
        {
            _open.MarkModified(file.Target);
            if (LibC.FTruncate(file.Descriptor, size) != 0)
            {
                var errno = LibC.NegativeErrno();
                file.Target.Digest?.End();
                return errno;
            }
            if (size == 0)
            {
                // Cut to nothing (.NET truncates this way after its open): hashed as it is written from here.
                _open.Emptied(file.Target);
            }
            else
            {
                file.Target.Digest?.Truncated(size);
            }
            return 0;
        }
        if (fusePath is null)
        {
            return -Errno.EBADF;
        }
        // truncate(2) on a path: an open of its own, so a stub is recalled first unless it is cut to 0.
        var path = Named(fusePath);
        if (_drive.IsInternalPath(path))
        {
            return -Errno.ENOENT;
        }
        var caller = CurrentCaller();
        var target = _open.Acquire(path);
        // Handles open on the file see it cut without a write of theirs: their checksums no longer hold.
        target.Digest?.End();
        var result = -Errno.EIO;
        try
        {
            var decision = Wait(_drive.OpenAsync(path, caller, size == 0 ? OpenIntent.Truncate : OpenIntent.Write));
            result = decision != OpenDecision.Local ? -Errno.EACCES
                : _cache.Truncate(path, size);
        }
        finally
        {
            ReleaseAndReport(target, modified: result == 0, caller);
        }
        return result;
    }

    /// <summary>
    /// fallocate(2) on an open file, done on its cache file: space reserved (mode 0, which may grow the file, or
    /// FALLOC_FL_KEEP_SIZE), a hole punched, a range zeroed, collapsed or inserted. All but a reservation that keeps the
    /// size change what the file holds: it is marked changed (uploaded after its settle) and the checksums taken as it
    /// was written no longer hold. A reservation is checked against the cache volume's room as a write is.
    /// </summary>
    internal int Allocate(ulong handle, int mode, long offset, long length)
    {
        if (_open.Get(handle) is not { Streamed: false } file)
        {
            return -Errno.EBADF;
        }
        var reserves = (mode & ~LibC.FallocKeepSize) == 0;
        if (reserves && !_space.Allows(length))
        {
            return -Errno.ENOSPC;
        }
        if (mode != LibC.FallocKeepSize)
        {
            _open.MarkModified(file.Target);
            file.Target.Digest?.End();
        }
        return LibC.FAllocate(file.Descriptor, mode, offset, length) == 0 ? 0 : LibC.NegativeErrno();
    }

    internal int FSync(ulong handle, bool dataOnly)
    {
        if (_open.Get(handle) is not { } file)
        {
            return -Errno.EBADF;
        }
        if (file.Streamed)
        {
            return 0;
        }
        var result = dataOnly ? LibC.FDataSync(file.Descriptor) : LibC.FSync(file.Descriptor);
        return result == 0 ? 0 : LibC.NegativeErrno();
    }

    /// <summary>
    /// close(2) of a descriptor: the engine hears it with whether the file changed since the last
    /// flush (sync mode uploads before answering). Unless the engine took the change in hand, it is
    /// marked again so the last close still reports it; an engine failure reaches the application's close.
    /// </summary>
    internal int Flush(ulong handle)
    {
        if (_open.Get(handle) is not { } file)
        {
            return -Errno.EBADF;
        }
        Interlocked.Increment(ref _flushesServed);
        if (file.Streamed)
        {
            return 0;
        }
        var modified = _open.TakeModified(file.Target);
        var handled = false;
        try
        {
            handled = Wait(_drive.FlushedAsync(file.Target.Path, CurrentCaller(), modified));
        }
        finally
        {
            if (modified && !handled)
            {
                _open.MarkModified(file.Target);
            }
        }
        return 0;
    }

    internal int Release(string? fusePath, ulong handle)
    {
        if (_open.Get(handle) is not { } file)
        {
            return -Errno.EBADF;
        }
        if (file.Descriptor >= 0)
        {
            LibC.Close(file.Descriptor);
        }
        if (file.Mode != OpenMode.Served)
        {
            _passthrough.Unregister(_open.EndPassthrough(file.Target));
        }
        try
        {
            ReleaseAndReport(file.Target, modified: false, CurrentCaller());
        }
        finally
        {
            // Counted as open until the engine has heard of the close.
            _open.Remove(handle);
        }
        if (fusePath is not null)
        {
            _kernelNames.Used(Relative(fusePath));
        }
        return 0;
    }

    /// <summary>Drops one open of a path; the last one tells the engine, with "modified" if any handle changed the file.</summary>
    private void ReleaseAndReport(OpenPath target, bool modified, Caller caller)
    {
        if (_open.Release(target, modified, out var path, out var anyModified, out var digest))
        {
            try
            {
                // Waits for the last bytes still being hashed (the application's close(2) does not wait for this release).
                var written = digest?.Finish();
                Wait(written is not null ? _drive.ClosedWrittenAsync(path, caller, written) : _drive.ClosedAsync(path, caller, anyModified));
            }
            finally
            {
                _open.Reported(target);
            }
        }
    }

    private static T Wait<T>(ValueTask<T> task) => task.IsCompletedSuccessfully ? task.Result : BlockUntilDone(task.AsTask()).GetAwaiter().GetResult();

    private static void Wait(ValueTask task)
    {
        if (!task.IsCompletedSuccessfully)
        {
            BlockUntilDone(task.AsTask()).GetAwaiter().GetResult();
        }
    }

    /// <summary>
    /// A FUSE callback is synchronous, so its thread waits for the engine's task. GetResult on a running
    /// task spins (sched_yield) before it blocks: with 16 FUSE threads waiting on recalls, on two cores
    /// shared with the S3 server, that spinning was a tenth of the service's CPU. This blocks at once.
    /// </summary>
    private static TTask BlockUntilDone<TTask>(TTask task) where TTask : Task
    {
        if (!task.IsCompleted)
        {
            // Not disposed: it holds no kernel handle, and Set may still be returning when Wait does.
            var done = new ManualResetEventSlim(false, spinCount: 0);
            task.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(done.Set);
            done.Wait();
        }
        return task;
    }
}
