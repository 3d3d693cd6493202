using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace GeoDrive.Mount.ProjFS.Native;

/// <summary>
/// The ProjectedFSLib.dll entry points GeoDrive uses (Windows 10 1809+ / Server 2019+ with the
/// Client-ProjFS optional feature). Declared from Microsoft's ProjFS reference because the managed
/// package is not served here.
/// </summary>
[SupportedOSPlatform("windows")]
internal static unsafe partial class ProjectedFsLib
{
    private const string Library = "ProjectedFSLib.dll";

    [LibraryImport(Library, EntryPoint = "PrjStartVirtualizing", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int StartVirtualizing(string virtualizationRootPath, PrjCallbacks* callbacks, nint instanceContext,
        PrjStartVirtualizingOptions* options, out nint namespaceVirtualizationContext);

    [LibraryImport(Library, EntryPoint = "PrjStopVirtualizing")]
    public static partial void StopVirtualizing(nint namespaceVirtualizationContext);

    [LibraryImport(Library, EntryPoint = "PrjMarkDirectoryAsPlaceholder", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int MarkDirectoryAsPlaceholder(string rootPathName, string? targetPathName,
        PrjPlaceholderVersionInfo* versionInfo, Guid* virtualizationInstanceId);

    [LibraryImport(Library, EntryPoint = "PrjWritePlaceholderInfo", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int WritePlaceholderInfo(nint namespaceVirtualizationContext, string destinationFileName,
        PrjPlaceholderInfo* placeholderInfo, uint placeholderInfoSize);

    [LibraryImport(Library, EntryPoint = "PrjUpdateFileIfNeeded", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int UpdateFileIfNeeded(nint namespaceVirtualizationContext, string destinationFileName,
        PrjPlaceholderInfo* placeholderInfo, uint placeholderInfoSize, PrjUpdateTypes updateFlags, out PrjUpdateFailureCauses failureReason);

    [LibraryImport(Library, EntryPoint = "PrjDeleteFile", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int DeleteFile(nint namespaceVirtualizationContext, string destinationFileName,
        PrjUpdateTypes updateFlags, out PrjUpdateFailureCauses failureReason);

    [LibraryImport(Library, EntryPoint = "PrjGetOnDiskFileState", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int GetOnDiskFileState(string destinationFileName, out PrjFileState fileState);

    [LibraryImport(Library, EntryPoint = "PrjWriteFileData")]
    public static partial int WriteFileData(nint namespaceVirtualizationContext, Guid* dataStreamId, void* buffer, ulong byteOffset, uint length);

    [LibraryImport(Library, EntryPoint = "PrjAllocateAlignedBuffer")]
    public static partial void* AllocateAlignedBuffer(nint namespaceVirtualizationContext, nuint size);

    [LibraryImport(Library, EntryPoint = "PrjFreeAlignedBuffer")]
    public static partial void FreeAlignedBuffer(void* buffer);

    [LibraryImport(Library, EntryPoint = "PrjFillDirEntryBuffer", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int FillDirEntryBuffer(string fileName, PrjFileBasicInfo* fileBasicInfo, nint dirEntryBufferHandle);

    /// <summary>extendedParameters is left null: GeoDrive never changes the notification mask on completion.</summary>
    [LibraryImport(Library, EntryPoint = "PrjCompleteCommand")]
    public static partial int CompleteCommand(nint namespaceVirtualizationContext, int commandId, int completionResult, void* extendedParameters);

    [LibraryImport(Library, EntryPoint = "PrjFileNameCompare", StringMarshalling = StringMarshalling.Utf16)]
    public static partial int FileNameCompare(string fileName1, string fileName2);

    [LibraryImport(Library, EntryPoint = "PrjFileNameMatch", StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.U1)]
    public static partial bool FileNameMatch(string fileNameToCheck, string pattern);

    [LibraryImport(Library, EntryPoint = "PrjDoesNameContainWildCards", StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.U1)]
    public static partial bool DoesNameContainWildCards(string fileName);
}
