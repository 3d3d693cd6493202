namespace GeoDrive.Mount.ProjFS.Native;

/// <summary>PRJ_NOTIFICATION: which operation a notification callback reports. Platform-neutral (used by the mapper's tests).</summary>
public enum PrjNotification : uint
{
    FileOpened = 0x2,
    NewFileCreated = 0x4,
    FileOverwritten = 0x8,
    PreDelete = 0x10,
    PreRename = 0x20,
    PreSetHardlink = 0x40,
    FileRenamed = 0x80,
    HardlinkCreated = 0x100,
    FileHandleClosedNoModification = 0x200,
    FileHandleClosedFileModified = 0x400,
    FileHandleClosedFileDeleted = 0x800,
    FilePreConvertToFull = 0x1000,
}

/// <summary>PRJ_FILE_STATE: what an item in the virtualization root is on disk.</summary>
[Flags]
public enum PrjFileState : uint
{
    None = 0x0,
    /// <summary>Placeholder with no local data: the Windows stub.</summary>
    Placeholder = 0x1,
    /// <summary>Placeholder whose data was fetched (hydrated) and not changed.</summary>
    HydratedPlaceholder = 0x2,
    /// <summary>Placeholder whose metadata changed locally.</summary>
    DirtyPlaceholder = 0x4,
    /// <summary>An ordinary file: written locally, ProjFS no longer tracks it.</summary>
    Full = 0x8,
    /// <summary>A deleted projected item's marker.</summary>
    Tombstone = 0x10,
}
