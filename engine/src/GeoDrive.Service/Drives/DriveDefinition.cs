namespace GeoDrive.Service.Drives;

/// <summary>What the service remembers of a drive across restarts (drives.json). No secrets here.</summary>
public sealed class DriveDefinition
{
    public required string Name { get; init; }
    public required string CachePath { get; init; }
    public required string MountPath { get; init; }
    public required string Endpoint { get; set; }
    public required string Bucket { get; init; }
    public string Prefix { get; init; } = "";
    public string Region { get; init; } = "us-east-1";
    public bool ForcePathStyle { get; init; } = true;
    // Settable: Set-CloudDrive changes the policy files and the endpoint of a drive in place.
    public string[] PolicyPaths { get; set; } = [];

    /// <summary>Whether the administrator wants it mounted; a restart restores that.</summary>
    public bool Mounted { get; set; }

    /// <summary>Uploads paused by Suspend-CloudDrive; kept across restarts until Resume-CloudDrive.</summary>
    public bool Suspended { get; set; }
}

/// <summary>The access key pair of one drive, kept in a root-only file.</summary>
public sealed class DriveCredential
{
    public required string AccessKey { get; init; }
    public required string SecretKey { get; init; }

    // Never let a secret reach a log through ToString.
    public override string ToString() => $"AccessKey {AccessKey}";
}
