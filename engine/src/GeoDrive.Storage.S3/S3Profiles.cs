using Amazon.Runtime;
using Amazon.Runtime.CredentialManagement;
using GeoDrive.Core.Errors;

namespace GeoDrive.Storage.S3;

/// <summary>
/// Reads a named AWS profile (the shared credentials and config files, and on Windows the SDK's own
/// store) the way the AWS CLI does, for drives created with New-CloudDrive -ProfileName.
/// </summary>
public static class S3Profiles
{
    /// <summary>The profile's static keys; a missing profile, or one without keys, is CredentialProfileNotFound.</summary>
    /// <param name="location">A credentials file to read instead of the default ones (~/.aws/credentials and ~/.aws/config of the service's user).</param>
    public static (string AccessKey, string SecretKey) Resolve(string profileName, string? location = null)
    {
        var where = string.IsNullOrEmpty(location) ? "the service user's ~/.aws/credentials and ~/.aws/config" : $"'{location}'";
        if (!string.IsNullOrEmpty(location) && !File.Exists(location))
        {
            throw NotFound($"The credentials file '{location}' does not exist.", profileName);
        }
        var chain = new CredentialProfileStoreChain(string.IsNullOrEmpty(location) ? null : location);
        if (!chain.TryGetAWSCredentials(profileName, out var credentials))
        {
            throw NotFound($"There is no AWS profile '{profileName}' in {where}.", profileName);
        }
        ImmutableCredentials keys;
        try
        {
            keys = credentials.GetCredentials();
        }
        catch (AmazonClientException ex)
        {
            throw NotFound($"The AWS profile '{profileName}' in {where} gives no usable keys: {ex.Message}", profileName);
        }
        if (string.IsNullOrEmpty(keys.AccessKey) || string.IsNullOrEmpty(keys.SecretKey))
        {
            throw NotFound($"The AWS profile '{profileName}' in {where} has no access key and secret key.", profileName);
        }
        if (keys.UseToken)
        {
            // S3StoreOptions carries static keys only; temporary keys would stop working within hours.
            throw NotFound($"The AWS profile '{profileName}' in {where} gives temporary keys (a session token); GeoDrive needs long-lived keys.", profileName);
        }
        return (keys.AccessKey, keys.SecretKey);
    }

    private static GeoDriveException NotFound(string message, string profileName) => new(
        ErrorIds.CredentialProfileNotFound, ErrorKind.ObjectNotFound, message,
        $"Create it as the service's user (root) with 'aws configure --profile {profileName}', or pass -ProfileLocation with the credentials file that holds it.");
}
