namespace GeoDrive.Core.Model;

/// <summary>The index's record of one file of a drive. Paths are drive-relative, '/'-separated, as written.</summary>
public sealed class FileEntry
{
    public required string Path { get; set; }
    public FileState State { get; set; }
    public bool Pinned { get; set; }

    /// <summary>Size of the file's current bytes.</summary>
    public long Size { get; set; }
    public DateTimeOffset ModifiedUtc { get; set; }
    public DateTimeOffset LastAccessUtc { get; set; }

    /// <summary>When the file last became Dirty; the settle delay counts from here.</summary>
    public DateTimeOffset? DirtySinceUtc { get; set; }

    /// <summary>Incremented on every local change, so an upload can tell the file changed under it.</summary>
    public long Generation { get; set; }

    /// <summary>
    /// SHA-256 (lowercase hex) of the bytes last verified in the bucket; null until then. A new value drops
    /// <see cref="Xxh128"/>, which stands for the same bytes only.
    /// </summary>
    public string? Checksum
    {
        get => _checksum;
        set
        {
            if (!string.Equals(value, _checksum, StringComparison.Ordinal))
            {
                _checksum = value;
                Xxh128 = null;
            }
        }
    }

    private string? _checksum;

    /// <summary>
    /// XXH3-128 (lowercase hex) of the same bytes as <see cref="Checksum"/>, what a recall checks when known
    /// (docs/decisions/0027-recall-checked-by-xxh128.md); set after <see cref="Checksum"/>, and null whenever it changes.
    /// </summary>
    public string? Xxh128 { get; set; }
    public string? ObjectKey { get; set; }
    public string? ETag { get; set; }
    public string? VersionId { get; set; }

    /// <summary>
    /// The version (ETag) of its own name's object that the file may replace although it never knew it: the version
    /// the file it replaced there by a rename knew. Kept in the index, so a restart does not turn the user's
    /// replacement into a conflict; cleared once the file's own bytes are under its name.
    /// </summary>
    public string? ReplacesETag { get; set; }

    /// <summary>
    /// The version (ETag) a conflict made this file a stub of (another site's, under its own name), until the file is opened
    /// here: nobody here has seen it, so a delete, overwrite or rename onto it here is aimed at the file the user wrote, now
    /// the conflict copy, and does not replace that version in the bucket (docs/decisions/0043-a-conflicts-stub-is-unseen-until-opened.md).
    /// </summary>
    public string? UnseenETag { get; set; }

    /// <summary>The version of its object this file stands for knowingly: <see cref="ETag"/>, unless that is <see cref="UnseenETag"/>.</summary>
    public string? SeenETag => UnseenETag is not null && string.Equals(UnseenETag, ETag, StringComparison.Ordinal) ? null : ETag;

    public int FailedAttempts { get; set; }
    public DateTimeOffset? NextAttemptUtc { get; set; }
    public string? LastError { get; set; }

    public FileEntry Clone() => (FileEntry)MemberwiseClone();
}
