namespace GeoDrive.Api;

public sealed partial class GeoDriveClient
{
    /// <summary>Set-CloudFile -Pin (true) or -Unpin (false); a pinned stub is recalled.</summary>
    public Task<FileActionResult[]> SetPinnedAsync(string drive, FileActionRequest request, bool pinned, CancellationToken cancellationToken = default) =>
        SendAsync<FileActionResult[]>(HttpMethod.Post, ApiRoutes.Drive(drive) + (pinned ? "/files/pin" : "/files/unpin"), request, cancellationToken);
}
