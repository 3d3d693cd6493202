namespace GeoDrive.Core.Model;

/// <summary>What kind of change a drive owes its bucket. Stored by name in the index: never renumber.</summary>
public enum BucketChangeKind
{
    /// <summary>Delete an object whose file was deleted, renamed away or excluded; skipped when a file lives under the key again.</summary>
    DeleteObject,

    /// <summary>Abort a multipart upload that was started and may not have ended (recorded before its first part).</summary>
    AbortMultipartUpload,

    /// <summary>Copy a renamed clean file's object from its old key to its new one (server side); the old key is deleted after.</summary>
    CopyObject,

    /// <summary>
    /// Write a clean file's properties (mode, owner, time, ACL, attributes), changed here, into its object's metadata: a
    /// server-side copy of the object onto itself, only while the object is still the version the file records.
    /// </summary>
    UpdateMetadata,

    /// <summary>
    /// Put a folder made here into the bucket as a zero-byte "name/" marker, so that a new host makes it too when it is
    /// empty; skipped when the folder is gone by then.
    /// </summary>
    PutFolderMarker,
}

/// <summary>
/// One change the drive owes its bucket, journaled in the index before the local change it follows
/// is acknowledged, retried until done and replayed after a restart (docs/architecture.md, "The bucket journal").
/// </summary>
public sealed class BucketChange
{
    /// <summary>Assigned by the journal when the change is added.</summary>
    public long Id { get; set; }

    public BucketChangeKind Kind { get; set; }

    /// <summary>The full object key (prefix included): the key deleted, aborted or copied to.</summary>
    public required string Key { get; set; }

    /// <summary>For <see cref="BucketChangeKind.CopyObject"/>: the old key the object is copied from (<see cref="Key"/> is the new one).</summary>
    public string? SourceKey { get; set; }

    /// <summary>
    /// For <see cref="BucketChangeKind.DeleteObject"/>: the version (ETag) the file that left the key here knew there, when
    /// known. Another site's other version found there is a change made elsewhere and is not deleted, after a restart too
    /// (docs/decisions/0041-a-delete-here-never-removes-a-change-made-elsewhere.md).
    /// </summary>
    public string? KnownETag { get; set; }

    /// <summary>The multipart upload's id, for <see cref="BucketChangeKind.AbortMultipartUpload"/>.</summary>
    public string? UploadId { get; set; }

    public DateTimeOffset CreatedUtc { get; set; }

    public int Attempts { get; set; }

    public DateTimeOffset? NextAttemptUtc { get; set; }

    public string? LastError { get; set; }

    public BucketChange Clone() => (BucketChange)MemberwiseClone();
}
