namespace GeoDrive.Api;

public sealed partial class GeoDriveClient
{
    /// <summary>Set-CloudDrive: changes a drive's policy files, endpoint or credential; the drive as it is afterwards.</summary>
    public Task<DriveInfo> SetDriveAsync(string name, SetDriveRequest request, CancellationToken cancellationToken = default) =>
        SendAsync<DriveInfo>(HttpMethod.Patch, ApiRoutes.Drive(name), request, cancellationToken);
}
