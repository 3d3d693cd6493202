using GeoDrive.Conformance;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>The case-insensitive drive's conformance suite, run through a real FUSE 3 mount over a case-sensitive cache folder.</summary>
public sealed class FuseCaseInsensitiveConformanceTests(S3ServerFixture s3) : CaseInsensitiveConformance(s3), IClassFixture<S3ServerFixture>
{
    protected override Task<IMountedDrive> MountAsync(IDriveFileSystem drive, string mountPath) =>
        Task.FromResult<IMountedDrive>(new FuseMountedDrive(drive, mountPath));
}
