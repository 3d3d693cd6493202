using System.Text.Json;

namespace GeoDrive.Api;

public sealed partial class GeoDriveClient
{
    public Task<RecallJobInfo[]> GetRecallJobsAsync(string drive, CancellationToken cancellationToken = default) =>
        SendAsync<RecallJobInfo[]>(HttpMethod.Get, RecallJobApiRoutes.Jobs(drive), null, cancellationToken);

    public Task<RecallJobInfo> RegisterRecallJobAsync(string drive, RegisterRecallJobRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<RecallJobInfo>(HttpMethod.Post, RecallJobApiRoutes.Jobs(drive), request, cancellationToken);

    public Task UnregisterRecallJobAsync(string drive, string name, CancellationToken cancellationToken = default) =>
        SendAsync<JsonElement>(HttpMethod.Delete, RecallJobApiRoutes.Job(drive, name), null, cancellationToken);
}
