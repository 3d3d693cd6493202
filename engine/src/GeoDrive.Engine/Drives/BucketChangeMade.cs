namespace GeoDrive.Engine.Drives;

/// <summary>What a change this drive made in its bucket was.</summary>
public enum BucketChangeMadeKind
{
    /// <summary>An object written: an upload verified, a folder's marker, a restored version, a file's properties (its object copied onto itself).</summary>
    Put,

    /// <summary>An object deleted (a file deleted here, or a renamed file's old key).</summary>
    Delete,

    /// <summary>A renamed clean file's object copied to its new key (its old key's delete follows as a Delete).</summary>
    Rename,
}

/// <summary>
/// A change this drive made in its bucket, raised once it is done (verified, deleted, copied and recorded), for the
/// sites that share the bucket. <paramref name="FromKey"/> is the old key of a Rename.
/// </summary>
public sealed record BucketChangeMade(BucketChangeMadeKind Kind, string Key, string? FromKey = null);

/// <summary>What following a peer's changes did: folders listed, stubs and folders made, clean files that followed a newer version.</summary>
public readonly record struct PeerChangesFollowed(int Folders, int StubsMade, int FoldersMade, int Followed);
