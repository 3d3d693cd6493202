namespace GeoDrive.Core.Model;

/// <summary>Where a file is in its life (docs/architecture.md, "A file's life"). Stored by name in the index: never renumber.</summary>
public enum FileState
{
    /// <summary>Local data not (yet) in the bucket, or changed since.</summary>
    Dirty,
    /// <summary>Transfer to the bucket in progress.</summary>
    Uploading,
    /// <summary>Local data equals the object; checksum recorded.</summary>
    Cached,
    /// <summary>Only the placeholder is local; size and times kept.</summary>
    Stubbed,
    /// <summary>Data coming back from the bucket.</summary>
    Recalling,
    /// <summary>Matched an exclude: never uploaded, never stubbed.</summary>
    Excluded,
}
