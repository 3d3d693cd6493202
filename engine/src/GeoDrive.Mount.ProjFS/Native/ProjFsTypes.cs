using System.Runtime.InteropServices;

namespace GeoDrive.Mount.ProjFS.Native;

// Layouts from projectedfslib.h (Windows SDK 10.0.17763+), x64 and arm64 alike. Read from Microsoft's
// ProjFS reference; every struct is blittable so callbacks never marshal.

/// <summary>PRJ_NOTIFY_TYPES: what a notification mapping asks to hear.</summary>
[Flags]
internal enum PrjNotifyTypes : uint
{
    None = 0x0,
    SuppressNotifications = 0x1,
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
    UseExistingMask = 0xFFFFFFFF,
}

/// <summary>PRJ_CALLBACK_DATA_FLAGS.</summary>
[Flags]
internal enum PrjCallbackDataFlags : uint
{
    None = 0,
    EnumRestartScan = 0x1,
    EnumReturnSingleEntry = 0x2,
}

/// <summary>PRJ_UPDATE_TYPES: what PrjDeleteFile / PrjUpdateFileIfNeeded may discard.</summary>
[Flags]
internal enum PrjUpdateTypes : uint
{
    None = 0x0,
    AllowDirtyMetadata = 0x1,
    AllowDirtyData = 0x2,
    AllowTombstone = 0x4,
    AllowReadOnly = 0x20,
}

/// <summary>PRJ_UPDATE_FAILURE_CAUSES.</summary>
[Flags]
internal enum PrjUpdateFailureCauses : uint
{
    None = 0x0,
    DirtyMetadata = 0x1,
    DirtyData = 0x2,
    Tombstone = 0x4,
    ReadOnly = 0x8,
}

[Flags]
internal enum PrjStartVirtualizingFlags : uint
{
    None = 0x0,
    UseNegativePathCache = 0x1,
}

/// <summary>PRJ_PLACEHOLDER_VERSION_INFO: two 128-byte ids (PRJ_PLACEHOLDER_ID_LENGTH).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct PrjPlaceholderVersionInfo
{
    public const int IdLength = 128;
    public fixed byte ProviderId[IdLength];
    public fixed byte ContentId[IdLength];
}

/// <summary>PRJ_CALLBACK_DATA: what every callback is handed.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct PrjCallbackData
{
    public uint Size;
    public PrjCallbackDataFlags Flags;
    public nint NamespaceVirtualizationContext;
    public int CommandId;
    public Guid FileId;
    public Guid DataStreamId;
    public char* FilePathName;
    public PrjPlaceholderVersionInfo* VersionInfo;
    public uint TriggeringProcessId;
    public char* TriggeringProcessImageFileName;
    public nint InstanceContext;
}

/// <summary>PRJ_FILE_BASIC_INFO. Times are FILETIMEs (100 ns since 1601, UTC).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct PrjFileBasicInfo
{
    public byte IsDirectory;
    public long FileSize;
    public long CreationTime;
    public long LastAccessTime;
    public long LastWriteTime;
    public long ChangeTime;
    public uint FileAttributes;
}

/// <summary>PRJ_PLACEHOLDER_INFO without extended attributes, security or streams (all offsets 0).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct PrjPlaceholderInfo
{
    public PrjFileBasicInfo FileBasicInfo;
    public uint EaBufferSize;
    public uint OffsetToFirstEa;
    public uint SecurityBufferSize;
    public uint OffsetToSecurityDescriptor;
    public uint StreamsInfoBufferSize;
    public uint OffsetToFirstStreamInfo;
    public PrjPlaceholderVersionInfo VersionInfo;
    // UINT8 VariableData[1] in C: unused, but part of sizeof(PRJ_PLACEHOLDER_INFO).
    public byte VariableData;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct PrjNotificationMapping
{
    public PrjNotifyTypes NotificationBitMask;
    public char* NotificationRoot;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct PrjStartVirtualizingOptions
{
    public PrjStartVirtualizingFlags Flags;
    public uint PoolThreadCount;
    public uint ConcurrentThreadCount;
    public PrjNotificationMapping* NotificationMappings;
    public uint NotificationMappingsCount;
}

/// <summary>PRJ_NOTIFICATION_PARAMETERS: a union; PostCreate/FileRenamed carry a mask, FileDeletedOnHandleClose a BOOLEAN.</summary>
[StructLayout(LayoutKind.Explicit)]
internal struct PrjNotificationParameters
{
    [FieldOffset(0)] public PrjNotifyTypes NotificationMask;
    [FieldOffset(0)] public byte IsFileModified;
}

/// <summary>PRJ_CALLBACKS: the provider's entry points (QueryFileName is optional and left null).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct PrjCallbacks
{
    public delegate* unmanaged<PrjCallbackData*, Guid*, int> StartDirectoryEnumeration;
    public delegate* unmanaged<PrjCallbackData*, Guid*, int> EndDirectoryEnumeration;
    public delegate* unmanaged<PrjCallbackData*, Guid*, char*, nint, int> GetDirectoryEnumeration;
    public delegate* unmanaged<PrjCallbackData*, int> GetPlaceholderInfo;
    public delegate* unmanaged<PrjCallbackData*, ulong, uint, int> GetFileData;
    public delegate* unmanaged<PrjCallbackData*, int> QueryFileName;
    public delegate* unmanaged<PrjCallbackData*, byte, PrjNotification, char*, PrjNotificationParameters*, int> Notification;
    public delegate* unmanaged<PrjCallbackData*, void> CancelCommand;
}

/// <summary>HRESULTs a provider returns or meets.</summary>
internal static class HResult
{
    public const int Ok = 0;
    public const int FileNotFound = unchecked((int)0x80070002);      // HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND)
    public const int AccessDenied = unchecked((int)0x80070005);      // ERROR_ACCESS_DENIED
    public const int OutOfMemory = unchecked((int)0x8007000E);
    public const int InvalidArgument = unchecked((int)0x80070057);
    public const int InsufficientBuffer = unchecked((int)0x8007007A); // ERROR_INSUFFICIENT_BUFFER
    public const int OperationAborted = unchecked((int)0x800703E3);   // ERROR_OPERATION_ABORTED
    public const int IoPending = unchecked((int)0x800703E5);          // ERROR_IO_PENDING
    public const int InternalError = unchecked((int)0x8007054F);      // ERROR_INTERNAL_ERROR
    public const int NetworkUnreachable = unchecked((int)0x800704CF); // ERROR_NETWORK_UNREACHABLE
    public const int Timeout = unchecked((int)0x800705B4);            // ERROR_TIMEOUT
    public const int DiskFull = unchecked((int)0x80070070);           // ERROR_DISK_FULL
    public const int SharingViolation = unchecked((int)0x80070020);  // ERROR_SHARING_VIOLATION
    public const int AlreadyExists = unchecked((int)0x800700B7);      // ERROR_ALREADY_EXISTS
    public const int ReparsePointEncountered = unchecked((int)0x80071128); // a folder that is already a placeholder
}
