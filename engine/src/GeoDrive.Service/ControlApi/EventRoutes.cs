using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Files;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.ControlApi;

/// <summary>Get-CloudDriveEvent: a drive's event log (LiteDB, the newest 100,000 kept), filtered here.</summary>
public static class EventRoutes
{
    public static void Map(WebApplication app)
    {
        app.MapPost(ApiRoutes.Drives + "/{name}/events/query", (string name, DriveEventQuery query, DriveRegistry drives) =>
            Query(drives.Engine(name).Name, drives.Engine(name).ReadEvents, query));
    }

    public delegate IReadOnlyList<DriveEvent> EventReader(DateTimeOffset? sinceUtc, DriveEventKind? kind, int limit);

    /// <summary>Newest first. Time and one kind are filtered by the index; several kinds, paths and the end time here.</summary>
    public static List<DriveEventInfo> Query(string drive, EventReader read, DriveEventQuery query)
    {
        var kinds = new HashSet<DriveEventKind>();
        foreach (var name in query.Kinds)
        {
            if (!Enum.TryParse<DriveEventKind>(name, ignoreCase: true, out var kind) || !Enum.IsDefined(kind))
            {
                throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                    $"'{name}' is not a kind of drive event.", $"Use one of: {string.Join(", ", Enum.GetNames<DriveEventKind>())}.");
            }
            kinds.Add(kind);
        }
        if (query.Newest < 0)
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                $"-Newest {query.Newest} is not a count of events.", "Give a positive number, or leave -Newest out for all events.");
        }
        var paths = query.Paths.Where(p => !string.IsNullOrEmpty(p)).Select(p => new FileQuery(p)).ToList();
        var filteredHere = query.Before is not null || paths.Count > 0 || kinds.Count > 1;
        // The index stops at the limit only when it filters everything itself; otherwise read all it keeps.
        var limit = !filteredHere && query.Newest > 0 ? query.Newest : int.MaxValue;
        var events = read(query.After, kinds.Count == 1 ? kinds.Single() : null, limit)
            .Where(e => kinds.Count == 0 || kinds.Contains(e.Kind))
            .Where(e => query.Before is not { } before || e.TimeUtc < before)
            .Where(e => paths.Count == 0 || (e.Path is { } p && paths.Any(q => q.Matches(p))));
        if (query.Newest > 0)
        {
            events = events.Take(query.Newest);
        }
        return events.Select(e => new DriveEventInfo
        {
            Drive = drive,
            Id = e.Id,
            Time = e.TimeUtc,
            Kind = e.Kind.ToString(),
            Path = e.Path,
            Message = e.Message,
            ErrorId = e.ErrorId,
        }).ToList();
    }
}
