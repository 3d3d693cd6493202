using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Engine.Files;

/// <summary>What happens to a file: each is one transition of its life (docs/architecture.md, "A file's life").</summary>
public enum FileChange
{
    /// <summary>New local bytes: created, written, truncated, or found changed. Bumps the generation.</summary>
    Written,

    /// <summary>Its name matches an exclude (new bytes, a rename, a policy change): kept local, never uploaded or stubbed. Bumps the generation.</summary>
    Excluded,

    /// <summary>Its bytes are being sent to the bucket.</summary>
    UploadStarted,

    /// <summary>The bucket holds the bytes the upload read: taken on the generation the upload started from.</summary>
    UploadVerified,

    /// <summary>The upload failed, or the file changed under it: it goes again.</summary>
    UploadAbandoned,

    /// <summary>Its bytes were verified in the bucket and are freed locally.</summary>
    Stubbed,

    /// <summary>The front end refused to free the bytes (ProjFS: the file is open): untouched, still Cached.</summary>
    StubRefused,

    /// <summary>The cache file holds a stub's placeholder (its mark says so), never data: it is a stub.</summary>
    PlaceholderFound,

    RecallStarted,

    /// <summary>The object's bytes are local, on disk, under the object's own key.</summary>
    Recalled,

    /// <summary>Recalled bytes of a stub renamed while they stayed under its old key: they go up under the new name. Bumps the generation.</summary>
    RecalledForNewName,

    /// <summary>The recall failed, was cancelled or was cut short by a stop: back to a clean stub, partial bytes never taken for data.</summary>
    RecallFailed,

    /// <summary>The bucket holds another version (another site or tool): the clean file follows it as a stub. Bumps the generation.</summary>
    BucketChanged,

    /// <summary>Changed here and in the bucket: the local bytes moved to a conflict copy, the name follows the bucket as a stub. Bumps the generation.</summary>
    KeptBoth,

    /// <summary>An entry made for an object found in the bucket, or rebuilt from a cache file's stub mark.</summary>
    FoundAsStub,

    /// <summary>After a restart: the run that was uploading it stopped; it goes again.</summary>
    Interrupted,

    /// <summary>The bucket's version of a clean file is an older write of this drive that landed late: its bytes go up again.</summary>
    LateWriteOver,
}

/// <summary>
/// The one owner of a file's life: every change of an entry's state goes through <see cref="Apply"/>, which
/// checks it against the life cycle's transitions (an illegal one is refused, never written) and, for a
/// decision taken earlier (an upload verified, a stub, a recall), against the generation it was taken on: a
/// decision on an old generation is dropped. Callers hold the file's path lock. Changes that keep the state
/// (times, pin, attempts, a copied key) go through <see cref="Save"/>. See docs/architecture.md, "A file's life".
/// </summary>
/// <param name="index">The drive's index.</param>
/// <param name="leavingCached">Told (the path's lock held) before a Cached file changes state or is forgotten: a recall's
/// bytes still being flushed are settled first (docs/decisions/0031-recall-flushed-after-its-answer.md).</param>
public sealed class FileLife(IFileIndex index, Action<string>? leavingCached = null)
{
    // A write may meet any state: during a recall it moves the generation on, and the recall's end is then dropped.
    private static readonly FileState?[] AnyOrNone = [null, FileState.Dirty, FileState.Uploading, FileState.Cached, FileState.Stubbed, FileState.Recalling, FileState.Excluded];

    /// <summary>The transitions: for each change, the states it may start from (null: no entry yet) and the state it leads to.</summary>
    private static readonly Dictionary<FileChange, (FileState?[] From, FileState To)> Transitions = new()
    {
        [FileChange.Written] = (AnyOrNone, FileState.Dirty),
        [FileChange.Excluded] = (AnyOrNone, FileState.Excluded),
        [FileChange.UploadStarted] = ([FileState.Dirty], FileState.Uploading),
        [FileChange.UploadVerified] = ([FileState.Uploading], FileState.Cached),
        [FileChange.UploadAbandoned] = ([FileState.Uploading, FileState.Dirty], FileState.Dirty),
        [FileChange.Stubbed] = ([FileState.Cached], FileState.Stubbed),
        [FileChange.StubRefused] = ([FileState.Stubbed], FileState.Cached),
        [FileChange.PlaceholderFound] = ([FileState.Dirty, FileState.Uploading], FileState.Stubbed),
        [FileChange.RecallStarted] = ([FileState.Stubbed], FileState.Recalling),
        [FileChange.Recalled] = ([FileState.Recalling], FileState.Cached),
        [FileChange.RecalledForNewName] = ([FileState.Recalling], FileState.Dirty),
        [FileChange.RecallFailed] = ([FileState.Recalling], FileState.Stubbed),
        [FileChange.BucketChanged] = ([FileState.Cached, FileState.Stubbed], FileState.Stubbed),
        [FileChange.KeptBoth] = ([FileState.Dirty, FileState.Uploading], FileState.Stubbed),
        [FileChange.FoundAsStub] = ([null, FileState.Stubbed], FileState.Stubbed),
        [FileChange.Interrupted] = ([FileState.Uploading], FileState.Dirty),
        [FileChange.LateWriteOver] = ([FileState.Cached], FileState.Dirty),
    };

    /// <summary>Changes that are new local bytes (or new bytes under the name): the generation moves on.</summary>
    private static bool BumpsGeneration(FileChange change) =>
        change is FileChange.Written or FileChange.Excluded or FileChange.RecalledForNewName or FileChange.KeptBoth or FileChange.BucketChanged;

    /// <summary>Where <paramref name="change"/> leads from <paramref name="from"/> (null: no entry yet), or null when it may not happen there.</summary>
    public static FileState? Next(FileState? from, FileChange change) =>
        Transitions.TryGetValue(change, out var t) && t.From.Contains(from) ? t.To : null;

    /// <summary>
    /// Moves <paramref name="entry"/> by <paramref name="change"/> and writes it (durably, or deferred where a
    /// crash costs work and never data). With <paramref name="decidedOn"/>, the change is a decision taken on that
    /// generation: if the file has moved on since, nothing is written and false is returned. A change the file's
    /// current state does not allow is refused (GeoDriveException, FileBusy) and nothing is written.
    /// </summary>
    public bool Apply(FileEntry entry, FileChange change, bool deferred = false, long? decidedOn = null)
    {
        var current = index.Get(entry.Path);
        if (decidedOn is { } generation && current?.Generation != generation)
        {
            return false;
        }
        if (Next(current?.State, change) is not { } next)
        {
            throw Refused(entry.Path, current?.State, change);
        }
        if (current?.State == FileState.Cached && next != FileState.Cached)
        {
            leavingCached?.Invoke(entry.Path);
        }
        if (BumpsGeneration(change))
        {
            entry.Generation = Math.Max(entry.Generation, current?.Generation ?? 0) + 1;
        }
        entry.State = next;
        Write(entry, deferred);
        return true;
    }

    /// <summary>Writes a change that keeps the file's state (times, pin, attempts, a key); refused if the state differs from the index's.</summary>
    public void Save(FileEntry entry, bool deferred = false)
    {
        if (index.Get(entry.Path) is { } current && current.State != entry.State)
        {
            throw new GeoDriveException(ErrorIds.FileBusy, ErrorKind.InvalidOperation,
                $"'{entry.Path}' changed from {current.State} while it was being recorded as {entry.State}; nothing was written.",
                "Try again; if it repeats, report it with the drive's events (Get-CloudDriveEvent).");
        }
        Write(entry, deferred);
    }

    /// <summary>Forgets a file's entry (its file was deleted, or it follows a delete in the bucket).</summary>
    public bool Forget(string path)
    {
        leavingCached?.Invoke(path);
        return index.Delete(path);
    }

    private void Write(FileEntry entry, bool deferred)
    {
        if (deferred)
        {
            index.PutDeferred(entry);
        }
        else
        {
            index.Put(entry);
        }
    }

    private static GeoDriveException Refused(string path, FileState? from, FileChange change) => new(
        ErrorIds.FileBusy, ErrorKind.InvalidOperation,
        $"'{path}' is {from?.ToString() ?? "not indexed"}: it cannot be {Describe(change)} now; nothing was changed.",
        "Try again once the file settles; if it repeats, report it with the drive's events (Get-CloudDriveEvent).");

    private static string Describe(FileChange change) => change switch
    {
        FileChange.UploadStarted => "uploaded",
        FileChange.UploadVerified => "recorded as uploaded",
        FileChange.Stubbed => "stubbed",
        FileChange.RecallStarted => "recalled",
        FileChange.Recalled or FileChange.RecalledForNewName => "recorded as recalled",
        _ => $"moved by '{change}'",
    };
}
