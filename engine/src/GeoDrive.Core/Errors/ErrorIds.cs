namespace GeoDrive.Core.Errors;

/// <summary>
/// The stable error ids. They are a public contract (scripts match on them): add, never rename.
/// docs/errors.md lists each with its remedy.
/// </summary>
public static class ErrorIds
{
    // Policies
    public const string PolicySyntax = "PolicySyntax";
    public const string PolicyUnknownKey = "PolicyUnknownKey";
    public const string PolicyBadValue = "PolicyBadValue";
    public const string PolicyBadDuration = "PolicyBadDuration";
    public const string PolicyBadSize = "PolicyBadSize";
    public const string PolicyBadGlob = "PolicyBadGlob";
    public const string PolicyWrongType = "PolicyWrongType";
    public const string PolicyMissingKey = "PolicyMissingKey";
    public const string PolicyFileNotFound = "PolicyFileNotFound";

    // Object store
    public const string EndpointUnreachable = "EndpointUnreachable";
    public const string CredentialsRejected = "CredentialsRejected";
    public const string BucketNotFound = "BucketNotFound";
    public const string AccessDenied = "AccessDenied";
    public const string ObjectNotFound = "ObjectNotFound";
    public const string ObjectMismatch = "ObjectMismatch";
    public const string StoreError = "StoreError";
    public const string HostileObjectKey = "HostileObjectKey";
    public const string ObjectNameTaken = "ObjectNameTaken";
    public const string SourceChanged = "SourceChanged";
    public const string StubNotData = "StubNotData";
    public const string PathTooLong = "PathTooLong";
    public const string PlantedLink = "PlantedLink";

    // Drives and mounts
    public const string DriveNotFound = "DriveNotFound";
    public const string DriveExists = "DriveExists";
    public const string CachePathInUse = "CachePathInUse";
    public const string CachePathInvalid = "CachePathInvalid";
    public const string MountPathNotFound = "MountPathNotFound";
    public const string MountPathNotEmpty = "MountPathNotEmpty";
    public const string MountFailed = "MountFailed";
    public const string DriveNotMounted = "DriveNotMounted";
    public const string FileNotFound = "FileNotFound";
    public const string FileBusy = "FileBusy";
    public const string FileNotUploaded = "FileNotUploaded";
    public const string LateWritePossible = "LateWritePossible";
    public const string VersionNotFound = "VersionNotFound";
    public const string FileNotDeleted = "FileNotDeleted";
    public const string SyncInProgress = "SyncInProgress";
    public const string FileExcluded = "FileExcluded";
    public const string RecallDenied = "RecallDenied";
    public const string CacheThresholdUnreachable = "CacheThresholdUnreachable";
    public const string CacheWriteFailed = "CacheWriteFailed";
    public const string CacheVolumeFull = "CacheVolumeFull";
    public const string PropertiesTrimmed = "PropertiesTrimmed";
    public const string PropertiesNotApplied = "PropertiesNotApplied";
    public const string UploadsUnguarded = "UploadsUnguarded";

    // Scheduled recall jobs (issue 5)
    public const string InvalidCron = "InvalidCron";
    public const string RecallJobNotFound = "RecallJobNotFound";
    public const string RecallJobExists = "RecallJobExists";
    public const string RecallJobDeclaredInPolicy = "RecallJobDeclaredInPolicy";

    // Service and module
    public const string ServiceNotRunning = "ServiceNotRunning";
    public const string ServiceAccessDenied = "ServiceAccessDenied";
    public const string InvalidRequest = "InvalidRequest";

    // Issue 5: pins and credentials
    public const string FilePinned = "FilePinned";
    public const string CredentialProfileNotFound = "CredentialProfileNotFound";
    public const string CredentialMissing = "CredentialMissing";

    // Issue 14: case-insensitive drives
    public const string CaseSensitivityFixed = "CaseSensitivityFixed";
    // Peers: sites sharing a bucket told of each other's changes
    public const string PeerSignatureInvalid = "PeerSignatureInvalid";
    public const string PeerNoticeReplayed = "PeerNoticeReplayed";
    public const string PeerUnreachable = "PeerUnreachable";
    public const string PeerListenFailed = "PeerListenFailed";
    public const string PeerKeyMissing = "PeerKeyMissing";

    // Metrics: the service's Prometheus scrape endpoint
    public const string MetricsListenRefused = "MetricsListenRefused";
    public const string MetricsListenFailed = "MetricsListenFailed";

    // The service's own command line
    public const string ServiceOptionRefused = "ServiceOptionRefused";
}
