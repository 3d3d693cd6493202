namespace GeoDrive.Api;

/// <summary>A drive as the service reports it. Never carries the secret key.</summary>
public sealed class DriveInfo
{
    public required string Name { get; init; }
    public required string CachePath { get; init; }
    public required string MountPath { get; init; }
    public required string Endpoint { get; init; }
    /// <summary>Every endpoint URL of the drive, <see cref="Endpoint"/> first.</summary>
    public string[] Endpoints { get; init; } = [];
    public required string Bucket { get; init; }
    public string Prefix { get; init; } = "";
    public string[] PolicyPaths { get; init; } = [];
    /// <summary>Names compare case-insensitively (keys in lower case, the name as written in metadata); fixed when the drive is made.</summary>
    public bool CaseInsensitive { get; init; }
    public bool Mounted { get; init; }
    /// <summary>Uploads paused (Suspend-CloudDrive).</summary>
    public bool Suspended { get; init; }
    /// <summary>How the service authenticates: "Credential" (a key pair given with -Credential) or "Profile" (an AWS profile). Never the secret.</summary>
    public string CredentialKind { get; init; } = "Credential";
    /// <summary>The access key id, masked but for its last 4 characters (all masked when shorter than 12).</summary>
    public string? AccessKeyId { get; init; }
    /// <summary>The AWS profile of a "Profile" drive, and the credentials file it was read from (null: the default files).</summary>
    public string? ProfileName { get; init; }
    public string? ProfileLocation { get; init; }
    public long FileCount { get; init; }
    public long DirtyCount { get; init; }
    public long CachedCount { get; init; }
    public long StubbedCount { get; init; }
    public string? LastError { get; init; }
    /// <summary>Said once, by New-CloudDrive: what works less well with this bucket (one that keeps no versions).</summary>
    public string[] Warnings { get; init; } = [];
    /// <summary>The peer sites this drive tells of its changes (their peer listeners' URLs).</summary>
    public string[] Peers { get; init; } = [];
    /// <summary>Where this drive hears its peers (address:port), or null when it does not listen.</summary>
    public string? PeerListen { get; init; }
    /// <summary>Whether a peer key is kept for the drive (the key itself is never shown).</summary>
    public bool PeerKeySet { get; init; }
}

public sealed class NewDriveRequest
{
    public required string Name { get; init; }
    public required string CachePath { get; init; }
    public required string MountPath { get; init; }
    public required string Endpoint { get; init; }
    public required string Bucket { get; init; }
    public string Prefix { get; init; } = "";
    public string[] PolicyPaths { get; init; } = [];
    /// <summary>-Credential: the access key pair, kept only by the service in its protected store.</summary>
    public string AccessKey { get; init; } = "";
    public string SecretKey { get; init; } = "";
    /// <summary>-ProfileName: an AWS profile the service reads at every drive start, instead of a key pair.</summary>
    public string? ProfileName { get; init; }
    /// <summary>-ProfileLocation: the credentials file holding the profile (default: the service user's ~/.aws).</summary>
    public string? ProfileLocation { get; init; }
    public string Region { get; init; } = "us-east-1";
    public bool ForcePathStyle { get; init; } = true;
    /// <summary>More URLs of the same store, used round-robin with <see cref="Endpoint"/>; a failing one is taken out and probed back in.</summary>
    public string[] AdditionalEndpoints { get; init; } = [];
    /// <summary>Mount right away (default). False only records the drive.</summary>
    public bool Mount { get; init; } = true;
    /// <summary>
    /// Windows: let backup products copy the cache folder. By default the service adds it to the
    /// FilesNotToBackup registry value (the bucket is the copy). Ignored on Linux.
    /// </summary>
    public bool IncludeCacheInBackup { get; init; }
    /// <summary>-CaseInsensitive: names compare case-insensitively. Null: the platform's default (on for Windows drives, off on Linux).</summary>
    public bool? CaseInsensitive { get; init; }
    /// <summary>-Peer: the peer listeners (http://host:port) of the sites sharing the bucket, told of this drive's changes.</summary>
    public string[] Peers { get; init; } = [];
    /// <summary>-PeerListen: address:port this drive hears its peers on (none: it does not listen).</summary>
    public string? PeerListen { get; init; }
    /// <summary>-PeerKey: the key shared by the drive's sites, signing every notice; kept only in the service's protected store.</summary>
    public string? PeerKey { get; init; }

    // Never let a secret reach a log through ToString.
    public override string ToString() => $"NewDriveRequest {Name} bucket {Bucket}";
}

/// <summary>One file of a drive as Get-CloudFile shows it.</summary>
public sealed class CloudFileInfo
{
    public required string Drive { get; init; }
    public required string Path { get; init; }
    public required string State { get; init; }
    public long Size { get; init; }
    public DateTimeOffset Modified { get; init; }
    public DateTimeOffset LastAccess { get; init; }
    /// <summary>Kept local: never stubbed by the access wait or the cache thresholds.</summary>
    public bool Pinned { get; init; }
    /// <summary>Why Pinned: "Cmdlet" (Set-CloudFile -Pin), "Policy" (a pin rule), or null.</summary>
    public string? PinnedBy { get; init; }
    public string? ObjectKey { get; init; }
    public string? ETag { get; init; }
    /// <summary>The bucket's version id of the object the file stands for (null when the bucket keeps no versions).</summary>
    public string? VersionId { get; init; }
    public string? Checksum { get; init; }
    public string? LastError { get; init; }
}

/// <summary>One version or delete marker of a file's object (Get-CloudFileVersion), newest first.</summary>
public sealed class CloudFileVersionInfo
{
    public required string Drive { get; init; }
    public required string Path { get; init; }
    public required string VersionId { get; init; }
    /// <summary>The bucket's current version of the key (a delete marker when the file was deleted).</summary>
    public bool IsLatest { get; init; }
    public bool IsDeleteMarker { get; init; }
    public long Size { get; init; }
    public DateTimeOffset Modified { get; init; }
    public string? ETag { get; init; }
}

/// <summary>Sync-CloudDrive: the tree under <see cref="Path"/> (the whole drive when empty) synced with the bucket now.</summary>
public sealed class SyncDriveRequest
{
    public string Path { get; init; } = "";
}

/// <summary>A Sync-CloudDrive running or done: folders listed so far, and the folders and stubs it made.</summary>
public sealed class DriveSyncInfo
{
    public required string Drive { get; init; }
    public string Path { get; init; } = "";
    public bool Running { get; init; }
    public int Folders { get; init; }
    public int FoldersMade { get; init; }
    public long StubsMade { get; init; }
    public DateTimeOffset Started { get; init; }
    /// <summary>Set once it ended.</summary>
    public DateTimeOffset? Ended { get; init; }
}

/// <summary>Restore-CloudFile: makes a version current again, as a new version; the drive shows it as a stub.</summary>
public sealed class RestoreFileRequest
{
    public required string Path { get; init; }
    /// <summary>The version to bring back; null with <see cref="Deleted"/>: the newest version before the delete.</summary>
    public string? VersionId { get; init; }
    /// <summary>The file was deleted: bring it back (refused when the drive or the bucket still holds it).</summary>
    public bool Deleted { get; init; }
}

public sealed class FileActionRequest
{
    /// <summary>Drive-relative paths or wildcard patterns ('*', '?', '**').</summary>
    public string[] Paths { get; init; } = [];
    /// <summary>True: the paths are literal (no wildcard expansion).</summary>
    public bool Literal { get; init; }
    /// <summary>Invoke-ForceStub -Force: stub pinned files too.</summary>
    public bool Force { get; init; }
}

/// <summary>What happened to one file of a force-stub or force-upload.</summary>
public sealed class FileActionResult
{
    public required string Drive { get; init; }
    public required string Path { get; init; }
    public required string State { get; init; }
    public bool Succeeded { get; init; }
    public string? ErrorId { get; init; }
    public string? Message { get; init; }
}

public sealed class ServiceInfo
{
    public required string Version { get; init; }
    public int ProcessId { get; init; }
    public required string SocketPath { get; init; }
    public required string StatePath { get; init; }
    public int DriveCount { get; init; }
}

/// <summary>The body of every non-2xx answer.</summary>
public sealed class ApiError
{
    public required string ErrorId { get; init; }
    public required string Kind { get; init; }
    public required string Message { get; init; }
    public string Remedy { get; init; } = "";
}

/// <summary>A drive's transfer status (Get-CloudDriveStatus): queues, bytes in flight, totals and rates.</summary>
public sealed class DriveStatusInfo
{
    public required string Name { get; init; }
    public bool Mounted { get; init; }
    public bool Suspended { get; init; }
    /// <summary>Files waiting to go up (Dirty).</summary>
    public long UploadQueue { get; init; }
    public long Uploading { get; init; }
    public long Recalling { get; init; }
    /// <summary>Changes owed to the bucket and not done yet (deletes of old keys, copies for renames, aborts of interrupted uploads).</summary>
    public long BucketChangesOwed { get; init; }
    /// <summary>True while the bucket did not answer a check: listings, lookups and opens go on with the cache as it is, without asking it.</summary>
    public bool BucketSilent { get; init; }
    public long Cached { get; init; }
    public long Stubbed { get; init; }
    public long Excluded { get; init; }
    public long UploadingBytes { get; init; }
    public long RecallingBytes { get; init; }
    /// <summary>Bytes per second over the last 10 s.</summary>
    public double UploadRate { get; init; }
    public double RecallRate { get; init; }
    /// <summary>Totals since the service started the drive.</summary>
    public long UploadedFiles { get; init; }
    public long UploadedBytes { get; init; }
    public long RecalledFiles { get; init; }
    public long RecalledBytes { get; init; }
}
