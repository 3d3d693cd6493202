namespace GeoDrive.Api;

/// <summary>
/// Set-CloudDrive: what to change about a drive. Null means "leave as it is". The secret travels only
/// in this request to the service, which keeps it in the drive's credential file.
/// </summary>
public sealed class SetDriveRequest
{
    /// <summary>The drive's policy files, in order; an empty list leaves the drive on the built-in defaults.</summary>
    public string[]? PolicyPaths { get; init; }

    /// <summary>The S3 endpoint URL(s); changing them restarts the drive's store.</summary>
    public string[]? Endpoints { get; init; }

    /// <summary>Access key and secret key, given together; changing them restarts the drive's store.</summary>
    public string? AccessKey { get; init; }

    public string? SecretKey { get; init; }

    /// <summary>Fixed when the drive is made: the same value changes nothing, another is refused (CaseSensitivityFixed).</summary>
    public bool? CaseInsensitive { get; init; }
    /// <summary>The peer listeners told of the drive's changes; an empty list tells none.</summary>
    public string[]? Peers { get; init; }

    /// <summary>address:port to hear peers on; "" stops listening.</summary>
    public string? PeerListen { get; init; }

    /// <summary>A new peer key (all of the drive's sites must use the same one).</summary>
    public string? PeerKey { get; init; }

    // Never let a secret reach a log through ToString.
    public override string ToString() =>
        $"PolicyPaths={(PolicyPaths is null ? "(unchanged)" : string.Join(", ", PolicyPaths))} Endpoints={(Endpoints is null ? "(unchanged)" : string.Join(", ", Endpoints))} AccessKey={(AccessKey is null ? "(unchanged)" : Core.Model.AccessKeys.Mask(AccessKey))} Peers={(Peers is null ? "(unchanged)" : string.Join(", ", Peers))} PeerListen={PeerListen ?? "(unchanged)"} PeerKey={(PeerKey is null ? "(unchanged)" : "(set)")}";
}
