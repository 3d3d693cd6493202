using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Notifications;
using GeoDrive.Mount.ProjFS.Projection;

namespace GeoDrive.Mount.ProjFS.Native;

/// <summary>
/// The entry points ProjFS calls, on its own pool threads. Each finds its mount through the instance
/// context, decodes the path (root-relative, '\'-separated) and the triggering process, and hands over
/// to the mount; nothing may throw back into native code, so every failure becomes an HRESULT here.
/// </summary>
[SupportedOSPlatform("windows")]
internal static unsafe class ProjFsCallbacks
{
    public static PrjCallbacks Table() => new()
    {
        StartDirectoryEnumeration = &StartDirectoryEnumeration,
        EndDirectoryEnumeration = &EndDirectoryEnumeration,
        GetDirectoryEnumeration = &GetDirectoryEnumeration,
        GetPlaceholderInfo = &GetPlaceholderInfo,
        GetFileData = &GetFileData,
        QueryFileName = null,
        Notification = &Notification,
        CancelCommand = &CancelCommand,
    };

    [UnmanagedCallersOnly]
    private static int StartDirectoryEnumeration(PrjCallbackData* data, Guid* enumerationId)
    {
        var id = *enumerationId;
        return Dispatch(data, (m, path, caller) => m.StartEnumeration(path, id, caller));
    }

    [UnmanagedCallersOnly]
    private static int EndDirectoryEnumeration(PrjCallbackData* data, Guid* enumerationId)
    {
        var id = *enumerationId;
        return Dispatch(data, (m, _, _) => m.EndEnumeration(id));
    }

    [UnmanagedCallersOnly]
    private static int GetDirectoryEnumeration(PrjCallbackData* data, Guid* enumerationId, char* searchExpression, nint buffer)
    {
        var id = *enumerationId;
        var expression = searchExpression is null ? null : new string(searchExpression);
        var flags = data->Flags;
        return Dispatch(data, (m, _, _) => m.GetEnumeration(id, expression, flags, buffer));
    }

    [UnmanagedCallersOnly]
    private static int GetPlaceholderInfo(PrjCallbackData* data)
    {
        var command = data->CommandId;
        return Dispatch(data, (m, path, caller) => m.GetPlaceholderInfo(path, command, caller));
    }

    [UnmanagedCallersOnly]
    private static int GetFileData(PrjCallbackData* data, ulong byteOffset, uint length)
    {
        var command = data->CommandId;
        var stream = data->DataStreamId;
        var contentId = data->VersionInfo is null
            ? ""
            : PlaceholderIds.Decode(new ReadOnlySpan<byte>(data->VersionInfo->ContentId, PrjPlaceholderVersionInfo.IdLength));
        return Dispatch(data, (m, path, caller) => m.GetFileData(path, command, stream, contentId, (long)byteOffset, length, caller));
    }

    [UnmanagedCallersOnly]
    private static int Notification(PrjCallbackData* data, byte isDirectory, PrjNotification notification, char* destinationFileName,
        PrjNotificationParameters* parameters)
    {
        var destination = destinationFileName is null ? null : new string(destinationFileName);
        var modified = notification == PrjNotification.FileHandleClosedFileDeleted && parameters is not null && parameters->IsFileModified != 0;
        return Dispatch(data, (m, path, caller) => m.Notify(notification, path, isDirectory != 0, destination, caller, modified));
    }

    [UnmanagedCallersOnly]
    private static void CancelCommand(PrjCallbackData* data)
    {
        try
        {
            ProjFsMount.FromInstance(data->InstanceContext)?.CancelCommand(data->CommandId);
        }
        catch (Exception)
        {
            // Nothing may cross back into ProjFS; the command completes (or not) on its own.
        }
    }

    private static int Dispatch(PrjCallbackData* data, Func<ProjFsMount, string, Caller, int> handler)
    {
        var mount = ProjFsMount.FromInstance(data->InstanceContext);
        if (mount is null)
        {
            return HResult.InternalError;
        }
        var path = NotificationMapper.ToDrivePath(data->FilePathName is null ? null : new string(data->FilePathName));
        try
        {
            var image = data->TriggeringProcessImageFileName is null ? null : new string(data->TriggeringProcessImageFileName);
            var caller = NotificationMapper.CallerOf(data->TriggeringProcessId, image);
            return handler(mount, path, caller);
        }
        catch (Exception ex)
        {
            return mount.Fail(path, ex);
        }
    }
}
