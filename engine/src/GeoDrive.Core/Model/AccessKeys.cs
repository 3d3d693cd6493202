namespace GeoDrive.Core.Model;

/// <summary>An access key id as GeoDrive shows it anywhere (errors, events, logs, Get-CloudDrive): its last four characters only.</summary>
public static class AccessKeys
{
    /// <summary>"****************K7Q2" for a key long enough to keep the rest hidden; "****" otherwise (and for none).</summary>
    public static string Mask(string? accessKey) =>
        accessKey is { Length: >= 12 } ? new string('*', accessKey.Length - 4) + accessKey[^4..] : "****";
}
