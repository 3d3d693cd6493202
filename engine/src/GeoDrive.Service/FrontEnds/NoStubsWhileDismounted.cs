using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;

namespace GeoDrive.Service.FrontEnds;

/// <summary>A ProjFS drive's stubbing while its root is not served: refused, so the file stays Cached with its data.</summary>
public sealed class NoStubsWhileDismounted : ILocalStubs
{
    public static readonly NoStubsWhileDismounted Instance = new();

    public void MakeStub(FileEntry entry, string localPath) =>
        throw new GeoDriveException(ErrorIds.DriveNotMounted, ErrorKind.ResourceUnavailable,
            $"'{entry.Path}' was not stubbed: on Windows a file becomes a stub only while its drive is mounted (ProjFS serves the cache folder).",
            "Mount the drive (Mount-CloudDrive), then stub again.");
}
