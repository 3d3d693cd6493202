using GeoDrive.Storage.S3;

namespace GeoDrive.Service.Drives;

public sealed partial class DriveRegistry
{
    /// <summary>
    /// A drive's keys at start: from the protected store (-Credential), or read again from its AWS
    /// profile (-ProfileName), so a rotated key in the profile takes effect at the next start.
    /// </summary>
    private DriveCredential LoadCredential(DriveDefinition definition)
    {
        if (definition.CredentialKind != DriveCredential.KindProfile)
        {
            return _config.LoadCredential(definition.Name);
        }
        var (accessKey, secretKey) = S3Profiles.Resolve(definition.ProfileName!, definition.ProfileLocation);
        return new DriveCredential { AccessKey = accessKey, SecretKey = secretKey };
    }
}
