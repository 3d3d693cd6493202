namespace GeoDrive.Commands;

/// <summary>The module's own user-facing texts, in one place (the service's refusals carry their own).</summary>
internal static class Messages
{
    public const string ConfirmCaption = "Confirm";
    public const string DriveNotFoundRemedy = "Run 'Get-CloudDrive' to list the drives, or create one with 'New-CloudDrive'.";
    public const string ServiceBinaryNotFoundRemedy = "Build it with 'bash scripts/build.sh', or pass -ServicePath or set GEODRIVE_SERVICE_PATH.";
    public const string ServiceStartRemedy = "Fix what the log says, then run 'Start-GeoDriveService' again.";
    public const string ServiceStopRemedy = "Check that no process keeps a mount busy, then stop it again or send SIGKILL.";

    public static string DriveNotFound(string name) => $"No cloud drive named '{name}' exists.";

    public static string FileNotFound(string path, string drive) => $"No file matches '{path}' on the drive '{drive}'.";

    public static string FileNotFoundRemedy(string drive) =>
        $"Run 'Get-CloudFile -Drive {drive}' to list its files; paths are relative to the drive root and use '/'.";

    public static string FileActionFailed(string action, string path, string drive, string reason) =>
        $"{action} of '{path}' on drive '{drive}' failed: {reason}";

    public static string ServiceBinaryNotFound(string path) => $"The GeoDrive service binary was not found at '{path}'.";

    public static string ServiceExited(int processId, string logPath) =>
        $"The GeoDrive service (process {processId}) exited before it answered; see its log '{logPath}'.";

    public static string ServiceStartTimeout(string socketPath, int seconds, string logPath) =>
        $"The GeoDrive service did not answer on '{socketPath}' within {seconds} s; see its log '{logPath}'.";

    public static string ServiceStopTimeout(int processId, int seconds) =>
        $"The GeoDrive service (process {processId}) did not stop within {seconds} s.";

    public const string ServiceScmRemedy = "Run PowerShell as an Administrator; check the service with 'Get-Service GeoDrive' and the Application event log (source GeoDrive).";

    public const string ServiceSystemdRemedy = "Run it as root (or with sudo); check the unit with 'systemctl status geodrive' and its log with 'journalctl -u geodrive'.";

    public static string ServiceSystemdRefused(string verb, string output) =>
        $"systemd did not {verb} the unit 'geodrive.service': {output}";

    public static string ServiceScmRefused(string scOutput) =>
        $"The Service Control Manager did not start the Windows service 'GeoDrive': {scOutput}";

    public static string ServiceAlreadyRunning(string socketPath, int processId) =>
        $"The GeoDrive service is already running on '{socketPath}' (process {processId}).";

    // Issue 5
    public const string PinOrUnpin = "Set-CloudFile needs exactly one of -Pin and -Unpin.";
    public const string PinOrUnpinRemedy = "Add -Pin to keep the files local, or -Unpin to let the policy stub them again.";
    // Get-CloudFileVersion, Restore-CloudFile
    public static string NoVersions(string path, string drive) => $"The bucket of drive '{drive}' holds no version of '{path}'.";

    public static string NoVersionsRemedy(string drive) =>
        $"Give the file's exact drive-relative path with '/' (no wildcards: a deleted file is not listed anywhere else); 'Get-CloudFile -Drive {drive}' lists the files the drive has.";

    public static string DeleteMarkerNotRestorable(string versionId, string path, string drive) =>
        $"Version '{versionId}' of '{path}' on drive '{drive}' is a delete marker: it holds no data to restore.";

    public static string DeleteMarkerNotRestorableRemedy(string path, string drive) =>
        $"Pick a version whose IsDeleteMarker is False from 'Get-CloudFileVersion -Drive {drive} -Path {path}', or run 'Restore-CloudFile -Drive {drive} -Path {path} -Deleted' for the newest version before the delete.";

    public static string RestoreAction(string? versionId, bool deleted) => (versionId, deleted) switch
    {
        (null, _) => "Restore the deleted file (its newest version before the delete, as a new current version; the file comes back as a stub)",
        (_, true) => $"Restore the deleted file from version {versionId} (as a new current version; the file comes back as a stub)",
        _ => $"Restore version {versionId} (as a new current version; older versions stay; the file becomes a stub)",
    };

    // Sync-CloudDrive, and Invoke-CloudRecall -Recurse before it looks for stubs
    public const string SyncAction = "Sync with the bucket (make a stub of each file and each folder the bucket has and the drive does not)";

    public static string SyncTarget(string path, string drive) => path.Length == 0 ? $"drive {drive}" : $"{path} on drive {drive}";

    public static string SyncActivity(string drive) => $"Syncing drive {drive} with its bucket";

    public static string SyncStatus(int folders, long stubsMade, int foldersMade) =>
        $"{folders} folders listed, {stubsMade} stubs and {foldersMade} folders made";

    // Set-CloudDrive
    public const string NothingToSet = "Set-CloudDrive was given nothing to change.";
    public const string NothingToSetRemedy = "Give -PolicyPath, -Endpoint, -Credential, -Peer, -PeerListen or -PeerKey.";

    public static string SetCloudDriveAction(string[]? policyPaths, string[]? endpoints, string? accessKey, string[]? peers = null, string? peerListen = null, bool peerKey = false) =>
        "Set " + string.Join("; ", new[]
        {
            policyPaths is null ? null : policyPaths.Length == 0 ? "no policy files (built-in defaults)" : "policy files " + string.Join(", ", policyPaths),
            endpoints is null ? null : "endpoint " + string.Join(", ", endpoints) + " (restarts the drive's store)",
            accessKey is null ? null : $"credential with access key {GeoDrive.Core.Model.AccessKeys.Mask(accessKey)} (restarts the drive's store)",
            peers is null ? null : peers.Length == 0 ? "no peers" : "peers " + string.Join(", ", peers),
            peerListen is null ? null : peerListen.Length == 0 ? "no peer listener" : "peer listener on " + peerListen,
            peerKey ? "a new peer key" : null,
        }.Where(s => s is not null));
}
