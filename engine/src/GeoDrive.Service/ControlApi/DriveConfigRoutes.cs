using GeoDrive.Api;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.ControlApi;

/// <summary>Set-CloudDrive's route: PATCH a drive's configuration (policy files, endpoint, credential).</summary>
public static class DriveConfigRoutes
{
    public static void Map(WebApplication app) =>
        app.MapPatch(ApiRoutes.Drives + "/{name}", (string name, SetDriveRequest request, DriveRegistry drives, CancellationToken ct) =>
            drives.ReconfigureAsync(name, request, ct));
}
