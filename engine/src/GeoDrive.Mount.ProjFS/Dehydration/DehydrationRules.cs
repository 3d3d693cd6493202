using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Native;

namespace GeoDrive.Mount.ProjFS.Dehydration;

public enum DehydrationVerdict
{
    /// <summary>Delete the local data (PrjDeleteFile with <see cref="DehydrationDecision.UpdateFlags"/>) and write the placeholder again.</summary>
    Dehydrate,
    /// <summary>Already a placeholder without data: nothing to do.</summary>
    AlreadyStub,
    /// <summary>Must not be dehydrated; <see cref="DehydrationDecision.ErrorId"/> and the reason say why.</summary>
    Refuse,
}

/// <summary>The answer for one file: what to do, and the update flags PrjDeleteFile needs for the file's on-disk state.</summary>
public sealed record DehydrationDecision(DehydrationVerdict Verdict, string? ErrorId, string Reason, uint UpdateFlags = 0)
{
    public bool MayDehydrate => Verdict == DehydrationVerdict.Dehydrate;
}

/// <summary>The file as it is on disk at the moment of the decision.</summary>
/// <param name="Exists">False when nothing (or a tombstone) is at the path.</param>
public readonly record struct OnDiskFile(bool Exists, PrjFileState State, long Size, DateTimeOffset ModifiedUtc, bool ReadOnly);

/// <summary>
/// When a file may become a stub on Windows — the engine's rules for stubbing (DriveEngine.StubAsync),
/// applied once more by the mount at the moment of dehydration, because dehydration throws the local
/// data away: the entry must be Cached (its bytes verified in the bucket: a checksum is recorded), the
/// file must not be open through the drive, and its size and last write time must still be those
/// the upload verified. The engine hashes the bytes and HEADs the object just before; this check
/// closes the gap between that and the delete.
/// </summary>
public static class DehydrationRules
{
    public static DehydrationDecision Decide(FileEntry entry, OnDiskFile onDisk, bool isOpen)
    {
        ArgumentNullException.ThrowIfNull(entry);
        if (!onDisk.Exists || onDisk.State.HasFlag(PrjFileState.Tombstone))
        {
            return new(DehydrationVerdict.Refuse, ErrorIds.FileNotFound, $"'{entry.Path}' is not in the cache.");
        }
        if (onDisk.State == PrjFileState.Placeholder)
        {
            return new(DehydrationVerdict.AlreadyStub, null, $"'{entry.Path}' is already a placeholder without local data.");
        }
        switch (entry.State)
        {
            case FileState.Excluded:
                return new(DehydrationVerdict.Refuse, ErrorIds.FileExcluded, $"'{entry.Path}' matches an exclude: it is never uploaded, so it cannot be stubbed.");
            case FileState.Dirty or FileState.Uploading or FileState.Recalling:
                return new(DehydrationVerdict.Refuse, ErrorIds.FileNotUploaded, $"'{entry.Path}' is {entry.State}: its bytes are not verified in the bucket.");
        }
        if (entry.Checksum is null)
        {
            return new(DehydrationVerdict.Refuse, ErrorIds.FileNotUploaded, $"'{entry.Path}' has no verified checksum.");
        }
        if (isOpen)
        {
            return new(DehydrationVerdict.Refuse, ErrorIds.FileBusy, $"'{entry.Path}' is open; an open file is never stubbed.");
        }
        if (onDisk.Size != entry.Size || onDisk.ModifiedUtc != entry.ModifiedUtc)
        {
            return new(DehydrationVerdict.Refuse, ErrorIds.FileNotUploaded, $"'{entry.Path}' changed since its last upload.");
        }
        return new(DehydrationVerdict.Dehydrate, null, "Verified in the bucket, closed and unchanged.", (uint)FlagsFor(onDisk));
    }

    /// <summary>
    /// PrjDeleteFile refuses to discard what ProjFS counts as local changes unless told: a full file
    /// (written here) is "dirty data", a placeholder whose times or attributes changed "dirty metadata".
    /// Both are allowed only because the rules above proved the bucket holds these bytes.
    /// </summary>
    internal static PrjUpdateTypes FlagsFor(OnDiskFile onDisk)
    {
        var flags = PrjUpdateTypes.None;
        if (onDisk.State.HasFlag(PrjFileState.Full))
        {
            flags |= PrjUpdateTypes.AllowDirtyData | PrjUpdateTypes.AllowDirtyMetadata;
        }
        if (onDisk.State.HasFlag(PrjFileState.DirtyPlaceholder))
        {
            flags |= PrjUpdateTypes.AllowDirtyMetadata;
        }
        if (onDisk.ReadOnly)
        {
            flags |= PrjUpdateTypes.AllowReadOnly;
        }
        return flags;
    }
}
