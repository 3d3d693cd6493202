namespace GeoDrive.Policies.Model;

/// <summary>When a changed file goes to the bucket (spec.upload.mode).</summary>
public enum UploadMode
{
    /// <summary>After the settle delay, in the background; the default.</summary>
    Async,
    /// <summary>Before the application's close returns.</summary>
    Sync,
}

/// <summary>What a drive does with a file a peer site told it of (spec.upload.peerChanges).</summary>
public enum PeerChangeAction
{
    /// <summary>Show it as a stub; its bytes come when it is opened. The default.</summary>
    Stub,
    /// <summary>Show it as a stub and recall it at once.</summary>
    Recall,
}

/// <summary>Whether a process triggers a check against the bucket (folderSync, fileSync, fileNotFound).</summary>
public enum SyncAction
{
    Sync,
    Skip,
}

/// <summary>What opening a stub does for a process (processExcludes[].recall).</summary>
public enum RecallAction
{
    /// <summary>Bring the data back into the cache; the default.</summary>
    Hydrate,
    /// <summary>Serve reads straight from the bucket and leave the cache and the stub alone (backup, virus scan).</summary>
    Stream,
    /// <summary>Refuse the open.</summary>
    Deny,
}
