using System.Globalization;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Engine.Layout;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// The conflict rule (docs/architecture.md): clean files follow the bucket, Dirty files win locally, and
/// when both changed both are kept. Before a Dirty file goes up, the bucket is asked what its key holds:
/// another site's or tool's version that this file never knew means both changed, so the local bytes
/// move to a conflict name (uploaded as a file of their own) and the real name becomes a stub of the
/// bucket's version.
/// </summary>
public sealed partial class DriveEngine
{
    private string? _siteId;
    private readonly Lock _siteIdLock = new();

    /// <summary>The mark of a stub of <paramref name="entry"/> standing for <paramref name="key"/>.</summary>
    private StubMark MarkFor(FileEntry entry, string key) => StubMark.For(entry, key, KeyFor(entry.Path));

    /// <summary>
    /// This drive's own id (in its state folder), written into every object it uploads (geodrive-site). Made once, under a
    /// lock: the first uploads of a new drive ask for it at once, and two ids made by two of them stamped objects with one
    /// while the drive went on with the other, so its own objects looked another site's (randomized crash runs, seeds
    /// 141294076 and 1129454965: a delete kept such an object as a change made elsewhere, ADR 0041).
    /// </summary>
    public string SiteId
    {
        get
        {
            if (_siteId is { } known)
            {
                return known;
            }
            lock (_siteIdLock)
            {
                return _siteId ??= LoadOrCreateSiteId();
            }
        }
    }

    private string LoadOrCreateSiteId()
    {
        var file = Path.Combine(Options.InternalPath, "site-id");
        if (File.Exists(file) && File.ReadAllText(file).Trim() is { Length: 32 } known)
        {
            return known;
        }
        Directory.CreateDirectory(Options.InternalPath);
        var id = Guid.NewGuid().ToString("N");
        // Whole or not at all: a reader (a restart after a crash) never finds half an id and makes another.
        var written = file + ".new";
        using (var stream = new FileStream(written, FileMode.Create, FileAccess.Write))
        {
            stream.Write(System.Text.Encoding.ASCII.GetBytes(id));
            stream.Flush(flushToDisk: true);
        }
        File.Move(written, file, overwrite: true);
        return id;
    }

    /// <summary>What an upload found under its key just before its PUT (<see cref="CompareWithBucketAsync"/>).</summary>
    /// <param name="Current">The object there (null: none), which the PUT may replace and nothing else.</param>
    /// <param name="Kept">Both changed and both were kept: the entry, now a stub of the bucket's version.</param>
    /// <param name="Deferred">Both changed, but the file was open or changed meanwhile: nothing may go up now.</param>
    private readonly record struct BucketComparison(ObjectInfo? Current, FileEntry? Kept, bool Deferred);

    /// <summary>
    /// The upload may go on (neither kept nor deferred) when the key is empty, holds this site's own upload, the
    /// version this file last knew, or these very bytes. Otherwise both changed: the local bytes move to a
    /// conflict name and the entry becomes a stub of the bucket's version, or, when the file cannot be moved
    /// now, the upload is deferred.
    /// </summary>
    private async Task<BucketComparison> CompareWithBucketAsync(string path, string key, string? knownETag, string sha256, long generation, CancellationToken cancellationToken)
    {
        var current = await _store.HeadAsync(key, cancellationToken);
        if (current is null
            || current.Metadata.GetValueOrDefault(ObjectLayout.SiteKey) == SiteId
            || ObjectLayout.SameETag(current.ETag, knownETag)
            || string.Equals(ObjectLayout.RecordedChecksum(current), sha256, StringComparison.OrdinalIgnoreCase))
        {
            return new BucketComparison(current, null, false);
        }
        using (await _locks.AcquireAsync(path, cancellationToken))
        {
            if (_index.Get(path) is not { } entry || entry.Generation != generation || _open.ContainsKey(path) || LocalFile.Read(LocalPath(path)) is null)
            {
                // Changed, moved or open meanwhile: nothing is moved under an application; the upload goes again later.
                return new BucketComparison(current, null, true);
            }
            var conflictPath = ConflictPathFor(path);
            var mine = entry.Clone();
            mine.Path = conflictPath;
            if (mine.ObjectKey == key)
            {
                // The key's version is the bucket's now: the local bytes are a new file under the conflict name.
                mine.ObjectKey = null;
                mine.ETag = null;
                mine.VersionId = null;
            }
            // Otherwise a renamed file's old key, which its upload under the conflict name deletes once verified
            // (dropped here, that object stayed in the bucket for good: soak seed 356002439).
            mine.Checksum = null;
            mine.UnseenETag = null;
            mine.DirtySinceUtc = _clock.UtcNow;
            mine.FailedAttempts = 0;
            mine.NextAttemptUtc = null;
            // Index first: a crash before the move leaves an entry recovery forgets, and the upload finds the conflict again.
            _life.Apply(mine, FileChange.Written);
            File.Move(LocalPath(path), LocalPath(conflictPath));

            entry.Size = current.Size;
            entry.ModifiedUtc = ObjectLayout.RecordedMtime(current);
            ObjectLayout.TakeChecksums(entry, current);
            entry.ETag = current.ETag;
            entry.VersionId = current.VersionId;
            entry.ObjectKey = key;
            // Put here by the conflict, unseen: a delete or overwrite arriving now is aimed at the bytes just moved aside.
            entry.UnseenETag = current.ETag;
            entry.DirtySinceUtc = null;
            entry.LastError = null;
            _life.Apply(entry, FileChange.KeptBoth);
            _sync.NotApplied(path, LocalFile.CreateStub(Options.CachePath, LocalPath(path), entry.Size, ObjectLayout.RecordedProperties(current), MarkFor(entry, key)));
            _sync.Checked(path);
            LocalCopyReplaced?.Invoke(path);
            Record(DriveEventKind.Conflict, path,
                $"Changed here and in the bucket (by another site or tool): the local bytes were kept as '{conflictPath}', and '{path}' is the bucket's version.");
            _uploads.QueueIfDue(mine);
            return new BucketComparison(current, entry, false);
        }
    }

    /// <summary>"report (conflict 2026-11-24 052641).docx" beside the file, numbered when taken. The time is UTC.</summary>
    private string ConflictPathFor(string path)
    {
        var folder = Core.Paths.DrivePath.Parent(path);
        var name = path[(folder.Length == 0 ? 0 : folder.Length + 1)..];
        var dot = name.LastIndexOf('.');
        var (stem, extension) = dot > 0 ? (name[..dot], name[dot..]) : (name, "");
        var stamp = _clock.UtcNow.ToString("yyyy-MM-dd HHmmss", CultureInfo.InvariantCulture);
        for (var n = 1; ; n++)
        {
            var candidate = $"{stem} (conflict {stamp}{(n > 1 ? $" {n}" : "")}){extension}";
            var candidatePath = folder.Length == 0 ? candidate : folder + "/" + candidate;
            if (!Path.Exists(LocalPath(candidatePath)) && _index.Get(candidatePath) is null)
            {
                return candidatePath;
            }
        }
    }
}
