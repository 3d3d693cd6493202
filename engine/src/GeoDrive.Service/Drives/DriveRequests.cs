using System.Text.RegularExpressions;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Service.Drives;

/// <summary>
/// What a request to make or change a drive must be, checked before anything is touched: names, paths (and
/// that no other drive uses them), endpoints, bucket and credentials. Pure but for <see cref="CheckFolders"/>,
/// which looks at the file system. Unit-tested in DriveRequestsTests.
/// </summary>
internal static partial class DriveRequests
{
    /// <summary>
    /// Everything about a new drive that can be checked without touching anything: its name, its paths, and that
    /// no drive of <paramref name="existing"/> already uses its cache or mount. <paramref name="inPlace"/>: the
    /// front end serves the cache folder itself (ProjFS).
    /// </summary>
    public static DriveDefinition NewDefinition(NewDriveRequest request, IReadOnlyCollection<DriveDefinition> existing, bool inPlace)
    {
        if (!NameRegex().IsMatch(request.Name ?? ""))
        {
            throw Invalid($"'{request.Name}' is not a valid drive name.", "Use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.");
        }
        if (existing.Any(d => string.Equals(d.Name, request.Name, StringComparison.OrdinalIgnoreCase)))
        {
            throw new GeoDriveException(ErrorIds.DriveExists, ErrorKind.ResourceExists,
                $"A cloud drive named '{request.Name}' already exists.", "Choose another name, or remove the existing drive with Remove-CloudDrive.");
        }
        if (inPlace)
        {
            ValidateInPlace(request);
        }
        else if (string.IsNullOrEmpty(request.MountPath))
        {
            throw Invalid("No mount path was given: on Linux the drive is mounted at an empty folder of its own.", "Give -MountPath, e.g. /mnt/demo.");
        }
        else if (!Path.IsPathFullyQualified(request.CachePath) || !Path.IsPathFullyQualified(request.MountPath))
        {
            throw Invalid("CachePath and MountPath must be absolute paths.", "Give full paths, e.g. /srv/demo-cache and /mnt/demo.");
        }
        var cache = Path.TrimEndingDirectorySeparator(Path.GetFullPath(request.CachePath));
        // In place (ProjFS) the drive shows at its cache folder: that is its mount path.
        var mount = inPlace ? cache : Path.TrimEndingDirectorySeparator(Path.GetFullPath(request.MountPath!));
        if (!inPlace && (IsSameOrInside(cache, mount) || IsSameOrInside(mount, cache)))
        {
            throw new GeoDriveException(ErrorIds.CachePathInvalid, ErrorKind.InvalidArgument,
                $"The cache path '{cache}' and the mount path '{mount}' overlap.", "Use two separate folders: the cache holds the data, the mount shows it.");
        }
        var other = existing.FirstOrDefault(d => IsSameOrInside(cache, d.CachePath) || IsSameOrInside(d.CachePath, cache));
        if (other is not null)
        {
            throw new GeoDriveException(ErrorIds.CachePathInUse, ErrorKind.ResourceExists,
                $"The cache path '{cache}' is already used by the cloud drive '{other.Name}' ('{other.CachePath}').",
                "Give every drive its own cache folder.");
        }
        if (!inPlace)
        {
            var otherMount = existing.FirstOrDefault(d => IsSameOrInside(mount, d.MountPath) || IsSameOrInside(d.MountPath, mount));
            if (otherMount is not null)
            {
                throw new GeoDriveException(ErrorIds.MountPathNotEmpty, ErrorKind.ResourceExists,
                    $"The mount path '{mount}' is already used by the cloud drive '{otherMount.Name}'.", "Give every drive its own empty mount folder.");
            }
        }
        var endpoint = EndpointUrl(request.Endpoint);
        var additional = (request.AdditionalEndpoints ?? []).Select(EndpointUrl).Select(u => u.ToString().TrimEnd('/'))
            .Where(u => u != endpoint.ToString().TrimEnd('/')).Distinct().ToArray();
        if (string.IsNullOrWhiteSpace(request.Bucket))
        {
            throw Invalid("No bucket was given.", "Give the bucket name with -Bucket.");
        }
        var byProfile = !string.IsNullOrWhiteSpace(request.ProfileName);
        if (byProfile && (!string.IsNullOrEmpty(request.AccessKey) || !string.IsNullOrEmpty(request.SecretKey)))
        {
            throw Invalid("Both a credential and an AWS profile were given.", "Give either -Credential or -ProfileName.");
        }
        if (!byProfile && (string.IsNullOrEmpty(request.AccessKey) || string.IsNullOrEmpty(request.SecretKey)))
        {
            throw new GeoDriveException(ErrorIds.CredentialMissing, ErrorKind.InvalidArgument, "No access key and secret key, and no AWS profile, was given.",
                "Pass -Credential with the access key as user name and the secret key as password, or -ProfileName with an AWS profile.");
        }
        var peers = PeersOf(request.Peers);
        var peerListen = PeerListenOf(request.PeerListen);
        if ((peers.Length > 0 || peerListen is not null) && PeerKeyOf(request.PeerKey) is null)
        {
            throw PeerKeyMissing();
        }
        if (peerListen is not null && existing.FirstOrDefault(d => d.PeerListen == peerListen) is { } listening)
        {
            throw Invalid($"The drive '{listening.Name}' already listens for its peers on {peerListen}.", "Give every drive its own -PeerListen port.");
        }
        var prefix = (request.Prefix ?? "").Trim('/');
        return new DriveDefinition
        {
            Peers = peers,
            PeerListen = peerListen,
            Name = request.Name!,
            CachePath = cache,
            MountPath = mount,
            Endpoint = endpoint.ToString().TrimEnd('/'),
            AdditionalEndpoints = additional,
            Bucket = request.Bucket,
            Prefix = prefix.Length == 0 ? "" : prefix + "/",
            Region = string.IsNullOrEmpty(request.Region) ? "us-east-1" : request.Region,
            ForcePathStyle = request.ForcePathStyle,
            PolicyPaths = request.PolicyPaths.Select(Path.GetFullPath).ToArray(),
            IncludeCacheInBackup = request.IncludeCacheInBackup,
            // As the platform's own file systems compare names: NTFS ignores case, Linux file systems do not.
            CaseInsensitive = request.CaseInsensitive ?? OperatingSystem.IsWindows(),
            CredentialKind = byProfile ? DriveCredential.KindProfile : DriveCredential.KindCredential,
            ProfileName = byProfile ? request.ProfileName!.Trim() : null,
            ProfileLocation = byProfile && !string.IsNullOrWhiteSpace(request.ProfileLocation) ? Path.GetFullPath(request.ProfileLocation) : null,
        };
    }


    /// <summary>The folders a new drive will use, as they are now: the cache must not be a file, the mount folder must exist and be empty.</summary>
    public static void CheckFolders(DriveDefinition definition, bool inPlace)
    {
        var (cache, mount) = (definition.CachePath, definition.MountPath);
        if (File.Exists(cache))
        {
            throw new GeoDriveException(ErrorIds.CachePathInvalid, ErrorKind.InvalidArgument,
                $"The cache path '{cache}' is a file.", "Give a folder (it is created if missing).");
        }
        if (!inPlace && !Directory.Exists(mount))
        {
            throw new GeoDriveException(ErrorIds.MountPathNotFound, ErrorKind.ObjectNotFound,
                $"The mount path '{mount}' does not exist.", $"Create it first (mkdir -p {mount}); it must be an empty folder.");
        }
        if (!inPlace && Directory.EnumerateFileSystemEntries(mount).Any())
        {
            throw new GeoDriveException(ErrorIds.MountPathNotEmpty, ErrorKind.InvalidArgument,
                $"The mount path '{mount}' is not empty.", "Mount over an empty folder; move its contents away (or into the drive after mounting).");
        }
    }

    public static string FullPolicyPath(string path) =>
        Path.IsPathFullyQualified(path)
            ? Path.GetFullPath(path)
            : throw Invalid($"The policy path '{path}' is not absolute.", "Give full paths (Set-CloudDrive resolves relative ones against the current folder).");

    /// <summary>Normalised URLs, first one the primary; the rest are used round-robin with it, as New-CloudDrive -Endpoint a, b does.</summary>
    public static string[] EndpointsOf(string[] endpoints)
    {
        var given = endpoints.Where(e => !string.IsNullOrWhiteSpace(e)).ToArray();
        if (given.Length == 0)
        {
            throw Invalid("No endpoint was given.", "Give the S3 endpoint as a URL, e.g. http://127.0.0.1:9000, or leave -Endpoint out.");
        }
        return given.Select(e => Uri.TryCreate(e, UriKind.Absolute, out var uri) && (uri.Scheme == "http" || uri.Scheme == "https")
                ? uri.ToString().TrimEnd('/')
                : throw Invalid($"'{e}' is not an http(s) endpoint URL.", "Give the S3 endpoint as a URL, e.g. http://127.0.0.1:9000 or https://s3.example.com."))
            .Distinct(StringComparer.Ordinal).ToArray();
    }

    public static DriveCredential? CredentialOf(SetDriveRequest request)
    {
        if (request.AccessKey is null && request.SecretKey is null)
        {
            return null;
        }
        if (string.IsNullOrEmpty(request.AccessKey) || string.IsNullOrEmpty(request.SecretKey))
        {
            throw Invalid("An access key was given without a secret key, or the other way round.",
                "Pass -Credential with the access key as user name and the secret key as password.");
        }
        return new DriveCredential { AccessKey = request.AccessKey, SecretKey = request.SecretKey };
    }

    /// <summary>-Peer: the peer listeners' URLs (http or https, host and port), normalised, no repeats.</summary>
    public static string[] PeersOf(string[]? peers) =>
        (peers ?? []).Where(p => !string.IsNullOrWhiteSpace(p)).Select(p =>
                Uri.TryCreate(p.Trim(), UriKind.Absolute, out var uri) && (uri.Scheme == "http" || uri.Scheme == "https") && uri.AbsolutePath == "/" && string.IsNullOrEmpty(uri.Query)
                    ? uri.GetLeftPart(UriPartial.Authority)
                    : throw Invalid($"'{p}' is not a peer's URL.", "Give the other site's -PeerListen address as a URL, e.g. http://site-b.example.com:7701."))
            .Distinct(StringComparer.OrdinalIgnoreCase).ToArray();

    /// <summary>-PeerListen: "address:port" (an IP address of this host), or a port alone for loopback; "" or null: none.</summary>
    public static string? PeerListenOf(string? listen)
    {
        if (string.IsNullOrWhiteSpace(listen))
        {
            return null;
        }
        return Peers.PeerLink.ParseListen(listen) is { } endpoint
            ? endpoint.ToString()
            : throw Invalid($"'{listen}' is not an address to listen on.", "Give an IP address of this host and a port, e.g. 0.0.0.0:7701 (every interface) or 127.0.0.1:7701 (this host only), or a port alone for 127.0.0.1.");
    }

    /// <summary>-PeerKey: at least 16 characters (a shared secret, e.g. 32 random bytes in base64); null when none was given.</summary>
    public static string? PeerKeyOf(string? key) =>
        key is null || key.Length == 0 ? null
        : key.Length >= 16 ? key
        : throw Invalid("The peer key is shorter than 16 characters.", "Give every site of the drive the same long random key, e.g. [Convert]::ToBase64String([Security.Cryptography.RandomNumberGenerator]::GetBytes(32)).");

    public static GeoDriveException PeerKeyMissing() => new(ErrorIds.PeerKeyMissing, ErrorKind.InvalidArgument,
        "Peers or a peer listener were given, but no peer key: notices between sites are signed with it.",
        "Pass -PeerKey (a SecureString) with the same key on every site of the drive.");

    public static Uri EndpointUrl(string? url) =>
        Uri.TryCreate(url, UriKind.Absolute, out var endpoint) && (endpoint.Scheme == "http" || endpoint.Scheme == "https")
            ? endpoint
            : throw Invalid($"'{url}' is not an http(s) endpoint URL.", "Give the S3 endpoint as a URL, e.g. http://127.0.0.1:9000 or https://s3.example.com.");

    /// <summary>
    /// Windows (ProjFS): the cache folder is what applications use, so there is no mount folder; a
    /// MountPath may be left out or be the cache path itself.
    /// </summary>
    private static void ValidateInPlace(NewDriveRequest request)
    {
        if (!Path.IsPathFullyQualified(request.CachePath))
        {
            throw Invalid("CachePath must be an absolute path.", @"Give a full path on a local NTFS volume, e.g. D:\GeoDrive\finance.");
        }
        if (!string.IsNullOrEmpty(request.MountPath) && !SamePath(request.MountPath, request.CachePath))
        {
            throw Invalid($"On Windows the cache folder is the drive: a separate mount path ('{request.MountPath}') is not used.",
                "Leave out -MountPath (or give the cache path); applications use the cache folder, or a drive letter pointing at it.");
        }
    }

    private static bool SamePath(string a, string b) =>
        string.Equals(Path.TrimEndingDirectorySeparator(Path.GetFullPath(a)), Path.TrimEndingDirectorySeparator(Path.GetFullPath(b)), PathComparison);

    /// <summary>Windows paths compare case-insensitively.</summary>
    private static StringComparison PathComparison => OperatingSystem.IsWindows() ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal;

    public static bool IsSameOrInside(string path, string folder)
    {
        path = Path.TrimEndingDirectorySeparator(path);
        folder = Path.TrimEndingDirectorySeparator(folder);
        return string.Equals(path, folder, PathComparison) || path.StartsWith(folder + Path.DirectorySeparatorChar, PathComparison);
    }

    public static GeoDriveException Invalid(string message, string remedy) =>
        new(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument, message, remedy);

    [GeneratedRegex("^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    private static partial Regex NameRegex();
}
