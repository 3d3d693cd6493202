using GeoDrive.Conformance;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>The shared file-system conformance suite, run through a real FUSE 3 mount.</summary>
public sealed class FuseConformanceTests(S3ServerFixture s3) : FileSystemConformance(s3), IClassFixture<S3ServerFixture>
{
    protected override Task<IMountedDrive> MountAsync(IDriveFileSystem drive, string mountPath) =>
        Task.FromResult<IMountedDrive>(new FuseMountedDrive(drive, mountPath));
}
