namespace GeoDrive.Api;

public sealed partial class GeoDriveClient
{
    /// <summary>A drive's events, newest first, filtered by the service (Get-CloudDriveEvent).</summary>
    public Task<DriveEventInfo[]> GetEventsAsync(string drive, DriveEventQuery query, CancellationToken cancellationToken = default) =>
        SendAsync<DriveEventInfo[]>(HttpMethod.Post, ApiRoutes.Events(drive) + "/query", query, cancellationToken);
}
