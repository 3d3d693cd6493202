using GeoDrive.Core.Model;
using GeoDrive.Mount.ProjFS.Enumeration;
using GeoDrive.Mount.ProjFS.Native;
using GeoDrive.Mount.ProjFS.Projection;

namespace GeoDrive.Mount.ProjFS;

/// <summary>Directory listings: a session per enumeration id, pages that resume where the buffer filled.</summary>
public sealed partial class ProjFsMount
{
    internal int StartEnumeration(string folder, Guid enumerationId, Caller caller)
    {
        if (_drive.IsInternalPath(folder))
        {
            return HResult.FileNotFound;
        }
        Wait(_drive.BeforeEnumerateAsync(folder, caller, _stopping.Token));
        _enumerations.Start(enumerationId, folder, () => _projection.List(folder));
        return HResult.Ok;
    }

    internal int EndEnumeration(Guid enumerationId)
    {
        _enumerations.End(enumerationId);
        return HResult.Ok;
    }

    internal unsafe int GetEnumeration(Guid enumerationId, string? searchExpression, PrjCallbackDataFlags flags, nint buffer)
    {
        if (_enumerations.Get(enumerationId) is not { } session)
        {
            return HResult.InvalidArgument;
        }
        var result = session.Fill(
            searchExpression,
            restartScan: flags.HasFlag(PrjCallbackDataFlags.EnumRestartScan),
            singleEntry: flags.HasFlag(PrjCallbackDataFlags.EnumReturnSingleEntry),
            item =>
            {
                var info = BasicInfo(item);
                // Full buffer: ERROR_INSUFFICIENT_BUFFER; the session keeps this entry for the next call.
                return ProjectedFsLib.FillDirEntryBuffer(item.Name, &info, buffer) == HResult.Ok;
            });
        return result == FillResult.BufferTooSmall ? HResult.InsufficientBuffer : HResult.Ok;
    }

    internal static PrjFileBasicInfo BasicInfo(ProjectedItem item)
    {
        var time = item.ModifiedUtc.UtcDateTime.ToFileTimeUtc();
        return new PrjFileBasicInfo
        {
            IsDirectory = item.IsDirectory ? (byte)1 : (byte)0,
            FileSize = item.IsDirectory ? 0 : item.Size,
            CreationTime = time,
            LastAccessTime = time,
            LastWriteTime = time,
            ChangeTime = time,
            FileAttributes = item.FileAttributes,
        };
    }
}
