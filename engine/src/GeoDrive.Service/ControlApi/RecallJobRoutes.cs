using GeoDrive.Api;
using GeoDrive.Engine.Jobs;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.ControlApi;

/// <summary>Register-, Get- and Unregister-CloudRecallJob: a drive's scheduled recall jobs (the engine runs them).</summary>
public static class RecallJobRoutes
{
    public static void Map(WebApplication app)
    {
        app.MapGet(ApiRoutes.Drives + "/{name}/recall-jobs", (string name, DriveRegistry drives) =>
        {
            var engine = drives.Engine(name);
            return engine.RecallJobs().Select(j => Describe(engine.Name, j)).ToList();
        });
        app.MapPost(ApiRoutes.Drives + "/{name}/recall-jobs", (string name, RegisterRecallJobRequest request, DriveRegistry drives) =>
        {
            var engine = drives.Engine(name);
            var job = engine.RegisterRecallJob(new RecallJobSpec
            {
                Name = request.Name,
                Paths = request.Paths,
                Recurse = request.Recurse,
                Schedule = request.Schedule,
                TimeZone = string.IsNullOrWhiteSpace(request.TimeZone) ? null : request.TimeZone,
                ThrottleLimit = request.ThrottleLimit,
            });
            return Describe(engine.Name, job);
        });
        app.MapDelete(ApiRoutes.Drives + "/{name}/recall-jobs/{job}", (string name, string job, DriveRegistry drives) =>
        {
            drives.Engine(name).UnregisterRecallJob(job);
            return Results.NoContent();
        });
    }

    public static RecallJobInfo Describe(string drive, RecallJobView view)
    {
        var r = view.Record;
        return new RecallJobInfo
        {
            Drive = drive,
            Name = r.Name,
            Source = r.Source.ToString(),
            DeclaredAt = view.DeclaredAt,
            Paths = r.Paths,
            Recurse = r.Recurse,
            Schedule = r.Schedule,
            TimeZone = view.TimeZone,
            ThrottleLimit = r.ThrottleLimit,
            Registered = r.RegisteredUtc,
            NextRun = view.NextRunUtc,
            Running = view.Running,
            LastRun = r.LastRunStartUtc,
            LastRunEnd = r.LastRunEndUtc,
            LastResult = r.LastResult?.ToString(),
            Files = r.LastFiles,
            Bytes = r.LastBytes,
            Failures = r.LastFailures,
            LastMessage = r.LastMessage,
            RunCount = r.RunCount,
        };
    }
}
