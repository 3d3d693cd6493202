using System.Runtime.Versioning;
using GeoDrive.Conformance;
using GeoDrive.Core.Ports;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.ProjFS.Tests;

/// <summary>
/// The shared file-system conformance suite, run through a real ProjFS virtualization root on
/// Windows (the windows.yml workflow). Elsewhere every test is reported skipped with the reason.
/// </summary>
[SupportedOSPlatform("windows")]
[ConformanceRunsOn("windows", "ProjFS exists only on Windows (Client-ProjFS); here the ProjFS front end is verified by compilation, and the suite runs in .github/workflows/windows.yml")]
public sealed class ProjFsConformanceTests(S3ServerFixture s3) : FileSystemConformance(s3, stateOutsideCache: true), IClassFixture<S3ServerFixture>
{
    protected override Task<IMountedDrive> MountAsync(IDriveFileSystem drive, string mountPath) =>
        // ProjFS has no separate mount path: the cache folder itself is the virtualization root.
        Task.FromResult<IMountedDrive>(new ProjFsMountedDrive(Rig, drive));
}
