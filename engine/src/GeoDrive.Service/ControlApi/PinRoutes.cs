using GeoDrive.Api;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.ControlApi;

/// <summary>Set-CloudFile -Pin / -Unpin.</summary>
public static class PinRoutes
{
    public static void Map(WebApplication app)
    {
        app.MapPost(ApiRoutes.Drives + "/{name}/files/pin", (string name, FileActionRequest request, DriveRegistry drives, CancellationToken ct) =>
            ControlApiRoutes.ForEachFileAsync(drives.Engine(name), request, (engine, path, c) => engine.SetPinnedAsync(path, true, c), ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/files/unpin", (string name, FileActionRequest request, DriveRegistry drives, CancellationToken ct) =>
            ControlApiRoutes.ForEachFileAsync(drives.Engine(name), request, (engine, path, c) => engine.SetPinnedAsync(path, false, c), ct));
    }
}
