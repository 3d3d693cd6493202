using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Service.Drives;

namespace GeoDrive.Service.Tests;

/// <summary>Request validation for new and changed drives, without a service, a bucket or a folder.</summary>
public sealed class DriveRequestsTests
{
    private static NewDriveRequest Request(string name = "finance", string cache = "/srv/finance-cache", string mount = "/mnt/finance",
        string endpoint = "http://127.0.0.1:9000", string bucket = "finance", string accessKey = "AK", string secretKey = "SK", string? profile = null, string prefix = "") => new()
    {
        Name = name,
        CachePath = cache,
        MountPath = mount,
        Endpoint = endpoint,
        Bucket = bucket,
        AccessKey = accessKey,
        SecretKey = secretKey,
        ProfileName = profile,
        Prefix = prefix,
    };

    private static readonly DriveDefinition Existing = new()
    {
        Name = "scans",
        CachePath = "/srv/scans-cache",
        MountPath = "/mnt/scans",
        Endpoint = "http://127.0.0.1:9000",
        Bucket = "scans",
    };

    private static GeoDriveException Refused(NewDriveRequest request, bool inPlace = false) =>
        Assert.Throws<GeoDriveException>(() => DriveRequests.NewDefinition(request, [Existing], inPlace));

    [Fact]
    public void A_good_request_becomes_a_definition_with_normalised_paths_endpoint_and_prefix()
    {
        var definition = DriveRequests.NewDefinition(Request(cache: "/srv/finance-cache/", endpoint: "http://127.0.0.1:9000/", prefix: "/sites/paris/"), [Existing], inPlace: false);

        Assert.Equal(("/srv/finance-cache", "/mnt/finance", "http://127.0.0.1:9000", "sites/paris/"),
            (definition.CachePath, definition.MountPath, definition.Endpoint, definition.Prefix));
        Assert.Equal(DriveCredential.KindCredential, definition.CredentialKind);
    }

    [Theory]
    [InlineData(null, false)]
    [InlineData(true, true)]
    [InlineData(false, false)]
    public void Case_insensitivity_is_the_platforms_own_rule_unless_the_request_says(bool? asked, bool onLinux)
    {
        var request = Request();
        request = new NewDriveRequest
        {
            Name = request.Name, CachePath = request.CachePath, MountPath = request.MountPath, Endpoint = request.Endpoint, Bucket = request.Bucket,
            AccessKey = request.AccessKey, SecretKey = request.SecretKey, CaseInsensitive = asked,
        };

        var definition = DriveRequests.NewDefinition(request, [Existing], inPlace: false);

        // Windows drives (NTFS) compare names case-insensitively unless told otherwise; Linux drives only when told.
        Assert.Equal(asked ?? (OperatingSystem.IsWindows() || onLinux), definition.CaseInsensitive);
    }

    [Theory]
    [InlineData("", ErrorIds.InvalidRequest, "not a valid drive name")]
    [InlineData("-finance", ErrorIds.InvalidRequest, "not a valid drive name")]
    [InlineData("SCANS", ErrorIds.DriveExists, "already exists")]
    public void A_bad_or_taken_name_is_refused(string name, string errorId, string says)
    {
        var refused = Refused(Request(name: name));
        Assert.Equal(errorId, refused.ErrorId);
        Assert.Contains(says, refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/srv/finance-cache", "/srv/finance-cache/mnt", ErrorIds.CachePathInvalid, "overlap")]
    [InlineData("/srv/scans-cache/finance", "/mnt/finance", ErrorIds.CachePathInUse, "'scans'")]
    [InlineData("/srv/finance-cache", "/mnt/scans", ErrorIds.MountPathNotEmpty, "'scans'")]
    [InlineData("srv/finance-cache", "/mnt/finance", ErrorIds.InvalidRequest, "absolute")]
    [InlineData("/srv/finance-cache", "", ErrorIds.InvalidRequest, "No mount path")]
    public void Paths_that_overlap_another_drive_or_each_other_or_are_relative_are_refused(string cache, string mount, string errorId, string says)
    {
        var refused = Refused(Request(cache: cache, mount: mount));
        Assert.Equal(errorId, refused.ErrorId);
        Assert.Contains(says, refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("ftp://127.0.0.1", "", "AK", "SK", null, ErrorIds.InvalidRequest, "not an http(s) endpoint URL")]
    [InlineData("http://127.0.0.1:9000", " ", "AK", "SK", null, ErrorIds.InvalidRequest, "No bucket")]
    [InlineData("http://127.0.0.1:9000", "b", "", "", null, ErrorIds.CredentialMissing, "no AWS profile")]
    [InlineData("http://127.0.0.1:9000", "b", "AK", "SK", "default", ErrorIds.InvalidRequest, "Both a credential and an AWS profile")]
    public void A_bad_endpoint_bucket_or_credential_is_refused(string endpoint, string bucket, string accessKey, string secretKey, string? profile, string errorId, string says)
    {
        var refused = Refused(Request(endpoint: endpoint, bucket: bucket, accessKey: accessKey, secretKey: secretKey, profile: profile));
        Assert.Equal(errorId, refused.ErrorId);
        Assert.Contains(says, refused.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Changed_endpoints_are_normalised_and_deduplicated_and_a_half_credential_is_refused()
    {
        Assert.Equal(["http://a:9000", "http://b:9000"], DriveRequests.EndpointsOf(["http://a:9000/", " ", "http://b:9000", "http://a:9000"]));
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.EndpointsOf([""])).ErrorId);
        Assert.Null(DriveRequests.CredentialOf(new SetDriveRequest()));
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.CredentialOf(new SetDriveRequest { AccessKey = "AK" })).ErrorId);
        Assert.Equal(ErrorIds.InvalidRequest, Assert.Throws<GeoDriveException>(() => DriveRequests.FullPolicyPath("policies/a.yaml")).ErrorId);
    }
}
