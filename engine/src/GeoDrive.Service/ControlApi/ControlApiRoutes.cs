using GeoDrive.Core.Ports;
using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Paths;
using GeoDrive.Engine.Drives;
using GeoDrive.Engine.Files;
using GeoDrive.Service.Drives;
using GeoDrive.Service.Hosting;

namespace GeoDrive.Service.ControlApi;

/// <summary>The control API (HTTP/JSON on the service's socket). Routes are named in <see cref="ApiRoutes"/>.</summary>
public static class ControlApiRoutes
{
    public static void Map(WebApplication app)
    {
        app.MapGet(ApiRoutes.Service, (ServiceOptions options, DriveRegistry drives) => new ServiceInfo
        {
            Version = typeof(ControlApiRoutes).Assembly.GetName().Version?.ToString() ?? "0.0",
            ProcessId = Environment.ProcessId,
            SocketPath = options.SocketPath,
            StatePath = options.HomePath,
            DriveCount = drives.Count,
        });

        app.MapGet(ApiRoutes.Drives, (DriveRegistry drives, CancellationToken ct) => drives.ListAsync(ct));
        app.MapPost(ApiRoutes.Drives, (NewDriveRequest request, DriveRegistry drives, CancellationToken ct) => drives.CreateAsync(request, ct));
        app.MapGet(ApiRoutes.Drives + "/{name}", (string name, DriveRegistry drives, CancellationToken ct) => drives.GetAsync(name, ct));
        app.MapDelete(ApiRoutes.Drives + "/{name}", async (string name, DriveRegistry drives, CancellationToken ct) =>
        {
            await drives.RemoveAsync(name, ct);
            return Results.NoContent();
        });
        app.MapPost(ApiRoutes.Drives + "/{name}/mount", (string name, DriveRegistry drives, CancellationToken ct) => drives.SetMountedAsync(name, true, ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/dismount", (string name, DriveRegistry drives, CancellationToken ct) => drives.SetMountedAsync(name, false, ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/suspend", (string name, DriveRegistry drives, CancellationToken ct) => drives.SetSuspendedAsync(name, true, ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/resume", (string name, DriveRegistry drives, CancellationToken ct) => drives.SetSuspendedAsync(name, false, ct));
        app.MapGet(ApiRoutes.Drives + "/{name}/status", (string name, DriveRegistry drives, IClock clock) => drives.Host(name).ToStatus(clock.UtcNow));

        app.MapGet(ApiRoutes.Drives + "/{name}/files", (string name, string? path, DriveRegistry drives) =>
        {
            var engine = drives.Engine(name);
            return engine.FindFiles(string.IsNullOrEmpty(path) ? "**" : path).OrderBy(e => e.Path, StringComparer.Ordinal).Select(e => Describe(engine, e)).ToList();
        });
        app.MapPost(ApiRoutes.Drives + "/{name}/files/stub", (string name, FileActionRequest request, DriveRegistry drives, CancellationToken ct) =>
            ForEachFileAsync(drives.Engine(name), request, (engine, path, c) => engine.ForceStubAsync(path, request.Force, c), ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/files/upload", (string name, FileActionRequest request, DriveRegistry drives, CancellationToken ct) =>
            ForEachFileAsync(drives.Engine(name), request, (engine, path, c) => engine.UploadAsync(path, c), ct));
        app.MapPost(ApiRoutes.Drives + "/{name}/files/recall", (string name, FileActionRequest request, DriveRegistry drives, CancellationToken ct) =>
            ForEachFileAsync(drives.Engine(name), request, (engine, path, c) => engine.RecallAsync(path, c), ct));

        app.MapGet(ApiRoutes.Drives + "/{name}/files/versions", async (string name, string path, DriveRegistry drives, CancellationToken ct) =>
        {
            var engine = drives.Engine(name);
            return (await engine.GetVersionsAsync(path, ct)).Select(v => new CloudFileVersionInfo
            {
                Drive = engine.Name,
                Path = DrivePath.Normalize(path),
                VersionId = v.VersionId,
                IsLatest = v.IsLatest,
                IsDeleteMarker = v.IsDeleteMarker,
                Size = v.Size,
                Modified = v.LastModifiedUtc,
                ETag = v.ETag?.Trim('"'),
            }).ToList();
        });
        app.MapPost(ApiRoutes.Drives + "/{name}/files/restore", async (string name, RestoreFileRequest request, DriveRegistry drives, CancellationToken ct) =>
        {
            var engine = drives.Engine(name);
            return Describe(engine, await engine.RestoreVersionAsync(request.Path, request.VersionId, request.Deleted, ct));
        });

        app.MapPost(ApiRoutes.Drives + "/{name}/sync", (string name, SyncDriveRequest request, DriveRegistry drives, IClock clock, CancellationToken ct) =>
            drives.Host(name).SyncAsync(request.Path ?? "", clock, ct));
        app.MapGet(ApiRoutes.Drives + "/{name}/sync", (string name, DriveRegistry drives) =>
            drives.Host(name).SyncProgress is { } progress ? Results.Ok(progress) : Results.NoContent());

        PolicyRoutes.Map(app);
        EventRoutes.Map(app);
        PinRoutes.Map(app);
        DriveConfigRoutes.Map(app);
        RecallJobRoutes.Map(app);
    }

    public static CloudFileInfo Describe(DriveEngine engine, FileEntry e) => new()
    {
        Drive = engine.Name,
        Path = e.Path,
        State = e.State.ToString(),
        Size = e.Size,
        Modified = e.ModifiedUtc,
        LastAccess = e.LastAccessUtc,
        Pinned = engine.IsPinned(e),
        PinnedBy = e.Pinned ? "Cmdlet" : engine.Policy.IsPinned(e.Path) ? "Policy" : null,
        ObjectKey = e.ObjectKey,
        ETag = e.ETag,
        VersionId = e.VersionId,
        Checksum = e.Checksum,
        LastError = e.LastError,
    };

    /// <summary>Runs an action on every file a request names; one file's refusal is its own result, not the request's.</summary>
    internal static async Task<List<FileActionResult>> ForEachFileAsync(
        DriveEngine engine, FileActionRequest request, Func<DriveEngine, string, CancellationToken, Task<FileEntry>> action, CancellationToken cancellationToken)
    {
        var paths = new List<string>();
        var results = new List<FileActionResult>();
        foreach (var pattern in request.Paths)
        {
            var matches = engine.FindFiles(pattern, request.Literal).Select(e => e.Path).ToList();
            if (matches.Count == 0)
            {
                results.Add(new FileActionResult
                {
                    Drive = engine.Name,
                    Path = pattern,
                    State = "",
                    Succeeded = false,
                    ErrorId = ErrorIds.FileNotFound,
                    Message = $"The drive has no file matching '{pattern}'. Check the path with Get-CloudFile; paths are relative to the drive root.",
                });
            }
            paths.AddRange(matches);
        }
        foreach (var path in paths.Distinct(StringComparer.Ordinal))
        {
            try
            {
                var entry = await action(engine, path, cancellationToken);
                results.Add(new FileActionResult { Drive = engine.Name, Path = path, State = entry.State.ToString(), Succeeded = true });
            }
            catch (GeoDriveException ex)
            {
                results.Add(new FileActionResult
                {
                    Drive = engine.Name,
                    Path = path,
                    State = engine.GetFile(path)?.State.ToString() ?? "",
                    Succeeded = false,
                    ErrorId = ex.ErrorId,
                    Message = ex.FullMessage,
                });
            }
        }
        return results;
    }
}
