using GeoDrive.Core.Model;

namespace GeoDrive.Service.Drives;

/// <summary>What the service remembers of a drive across restarts (drives.json). No secrets here.</summary>
public sealed class DriveDefinition
{
    public required string Name { get; init; }
    public required string CachePath { get; init; }
    public required string MountPath { get; init; }
    public required string Endpoint { get; set; }
    /// <summary>More URLs of the same store (New-CloudDrive -Endpoint a, b …), round-robin with <see cref="Endpoint"/>.</summary>
    public string[] AdditionalEndpoints { get; set; } = [];
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

    /// <summary>Windows: leave the cache folder to backup products (no FilesNotToBackup value); New-CloudDrive -IncludeCacheInBackup.</summary>
    public bool IncludeCacheInBackup { get; init; }
    /// <summary>Names compare case-insensitively (docs/decisions/0019-case-insensitive-drives.md); fixed when the drive is made. Drives made before the option have false.</summary>
    public bool CaseInsensitive { get; init; }
    /// <summary>"Credential": the key pair is in the protected store (credentials/NAME); "Profile": read from an AWS profile at every start.</summary>
    public string CredentialKind { get; init; } = DriveCredential.KindCredential;
    public string? ProfileName { get; init; }
    public string? ProfileLocation { get; init; }

    /// <summary>The peer listeners (http://host:port) of the sites sharing the bucket, told of this drive's changes.</summary>
    public string[] Peers { get; set; } = [];

    /// <summary>address:port this drive hears its peers on; null: it does not listen. The peer key is in the credential store.</summary>
    public string? PeerListen { get; set; }
}

/// <summary>The access key pair of one drive, kept in a root-only file.</summary>
public sealed class DriveCredential
{
    public required string AccessKey { get; init; }
    public required string SecretKey { get; init; }

    public const string KindCredential = "Credential";
    public const string KindProfile = "Profile";

    /// <summary>What Get-CloudDrive may show of an access key id: its last 4 characters, if it is long enough to keep the rest hidden.</summary>
    public static string Mask(string accessKey) => AccessKeys.Mask(accessKey);

    // Never let a secret reach a log through ToString.
    public override string ToString() => $"AccessKey {AccessKeys.Mask(AccessKey)}";
}
