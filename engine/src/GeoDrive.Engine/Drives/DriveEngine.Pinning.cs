using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;

namespace GeoDrive.Engine.Drives;

public sealed partial class DriveEngine
{
    /// <summary>
    /// Set-CloudFile -Pin/-Unpin. A pin means "keep local": the access wait and the cache thresholds
    /// never stub a pinned file, and pinning a stub recalls it now. Unpinning changes nothing else;
    /// the file is stubbed again when the policy says so.
    /// </summary>
    public async Task<FileEntry> SetPinnedAsync(string path, bool pinned, CancellationToken cancellationToken = default)
    {
        path = DrivePath.Normalize(path);
        FileEntry entry;
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            entry = _index.Get(path) ?? throw NotFound(path);
            if (entry.Pinned != pinned)
            {
                entry.Pinned = pinned;
                _life.Save(entry);
                _accessWaits.NeededFor(entry);
                Record(DriveEventKind.Pin, path, pinned ? "Pinned (Set-CloudFile -Pin): kept local, never stubbed." : "Unpinned (Set-CloudFile -Unpin): stubbed again as the policy says.");
            }
        }
        return pinned && entry.State == FileState.Stubbed ? await RecallAsync(path, cancellationToken) : entry;
    }

    /// <summary>Whether the file is pinned by Set-CloudFile, or else by a policy rule (pin: true).</summary>
    public bool IsPinned(FileEntry entry) => entry.Pinned || _policy.IsPinned(entry.Path);

    /// <summary>
    /// Invoke-ForceStub: as <see cref="StubAsync"/>, but a pinned file (by cmdlet or policy) is refused
    /// unless <paramref name="overridePin"/> (-Force); a stub forced that way stays pinned.
    /// </summary>
    public Task<FileEntry> ForceStubAsync(string path, bool overridePin, CancellationToken cancellationToken = default)
    {
        if (!overridePin && GetFile(path) is { } entry && entry.State != FileState.Stubbed && IsPinned(entry))
        {
            throw new GeoDriveException(ErrorIds.FilePinned, ErrorKind.InvalidOperation,
                $"'{entry.Path}' is pinned ({(entry.Pinned ? "by Set-CloudFile -Pin" : "by a rule of the drive's policy")}): a pinned file is kept local and not stubbed.",
                entry.Pinned ? "Unpin it with Set-CloudFile -Unpin, or stub it anyway with Invoke-ForceStub -Force." : "Change the policy's pin rule, or stub it anyway with Invoke-ForceStub -Force.");
        }
        return StubAsync(path, cancellationToken);
    }
}
