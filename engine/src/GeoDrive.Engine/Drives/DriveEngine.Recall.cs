using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Files;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    /// <summary>Brings a stub's data back from the bucket, verified against the recorded checksum.</summary>
    public async Task<FileEntry> RecallAsync(string path, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            var entry = _index.Get(path) ?? throw NotFound(path);
            return await RecallLockedAsync(entry, cancellationToken);
        }
    }

    /// <summary>Recall with the path's lock already held.</summary>
    private async Task<FileEntry> RecallLockedAsync(FileEntry entry, CancellationToken cancellationToken)
    {
        if (entry.State != FileState.Stubbed)
        {
            return entry;
        }
        var path = entry.Path;
        var key = entry.ObjectKey ?? KeyFor(path);
        var localPath = LocalPath(path);
        entry.State = FileState.Recalling;
        _index.Put(entry);

        Transfers.RecallStarted(entry.Size);
        try
        {
            // Written in place, so the file keeps its inode, owner and mode; the stub's size is already right.
            using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            // A stub made from an object GeoDrive did not write has no recorded SHA-256: its ETag (MD5) is checked instead.
            using var md5 = entry.Checksum is null ? IncrementalHash.CreateHash(HashAlgorithmName.MD5) : null;
            await using (var file = new FileStream(localPath, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, 0, FileOptions.Asynchronous))
            await using (var hashing = new HashingWriteStream(file, sha, md5))
            {
                await _store.GetAsync(key, DownloadThrottled ? new ThrottledStream(hashing, DownloadThrottle) : hashing, 0, null, cancellationToken);
                if (hashing.Written != entry.Size)
                {
                    throw Mismatch(path, key);
                }
                await file.FlushAsync(cancellationToken);
            }
            var sha256 = Convert.ToHexStringLower(sha.GetHashAndReset());
            if (entry.Checksum is null ? !ForeignObjectMatches(entry, md5!) : sha256 != entry.Checksum)
            {
                throw Mismatch(path, key);
            }
            entry.Checksum ??= sha256;
            File.SetLastWriteTimeUtc(localPath, entry.ModifiedUtc.UtcDateTime);
        }
        catch (Exception ex)
        {
            // Back to a clean stub: partial bytes are never taken for the file's data.
            LocalFile.MakeStub(localPath, entry.Size, entry.ModifiedUtc);
            entry.State = FileState.Stubbed;
            entry.LastError = ex is OperationCanceledException ? entry.LastError : ex.Message;
            _index.Put(entry);
            if (ex is not OperationCanceledException)
            {
                Record(DriveEventKind.Error, path, $"Recall failed: {ex.Message}", (ex as GeoDriveException)?.ErrorId ?? ErrorIds.StoreError);
            }
            throw;
        }
        finally
        {
            Transfers.RecallEnded(entry.Size);
        }

        Transfers.Recalled(entry.Size);
        entry.LastAccessUtc = _clock.UtcNow;
        entry.LastError = null;
        if (key == KeyFor(path))
        {
            entry.State = FileState.Cached;
        }
        else
        {
            // A stub renamed while its bytes stayed under the old key: now that the data is local it
            // goes up under its new name, and the old key is removed once that upload is verified.
            entry.State = FileState.Dirty;
            entry.Generation++;
            entry.DirtySinceUtc = _clock.UtcNow;
        }
        _index.Put(entry);
        Record(DriveEventKind.Recall, path, $"Recalled {ByteSize.Format(entry.Size)} from '{key}'.");
        return entry;
    }

    private static GeoDriveException Mismatch(string path, string key) => new(
        ErrorIds.ObjectMismatch, ErrorKind.InvalidData,
        $"The object '{key}' does not hold the bytes recorded for '{path}' (size or checksum differ); the file stays a stub.",
        "Someone changed or replaced the object in the bucket; restore the right version (bucket versioning) and open the file again.");

    /// <summary>Hashes what passes through on its way to the file.</summary>
    private sealed class HashingWriteStream(Stream inner, IncrementalHash hash, IncrementalHash? secondHash = null) : Stream
    {
        public long Written { get; private set; }

        public override bool CanRead => false;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => Written;
        public override long Position { get => Written; set => throw new NotSupportedException(); }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            hash.AppendData(buffer);
            secondHash?.AppendData(buffer);
            inner.Write(buffer);
            Written += buffer.Length;
        }

        public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            hash.AppendData(buffer.Span);
            secondHash?.AppendData(buffer.Span);
            await inner.WriteAsync(buffer, cancellationToken);
            Written += buffer.Length;
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();
    }
}
