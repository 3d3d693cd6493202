using System.Runtime.InteropServices;
using Amazon.S3.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Engine.Tests;

/// <summary>Tests that change the process's umask (the service's, here): run alone, after every parallel test.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ProcessUmaskCollection
{
    public const string Name = "process umask";
}

/// <summary>
/// A unit may run the service under a stricter umask (UMask=0077) than the packaged 0022. What the drive makes from the
/// bucket must still be open to the users it serves: folders rwxr-xr-x, stubs and recalled files their recorded mode.
/// </summary>
[Collection(ProcessUmaskCollection.Name)]
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed partial class ServiceUmaskTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private const UnixFileMode ReadableFile = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.OtherRead;

    [Fact]
    public async Task Folders_stubs_and_recalled_files_made_from_the_bucket_are_open_to_read_under_a_service_umask_of_0077()
    {
        await using var rig = new DriveRig(s3);
        await s3.Client.PutObjectAsync(new PutObjectRequest { BucketName = rig.Bucket, Key = "team/reports/q3.txt", ContentBody = "another tool's report" });

        var umask = Umask(0b000_111_111);
        try
        {
            await rig.Engine.SyncTreeAsync("");
            Assert.Equal(ReadableFile, File.GetUnixFileMode(rig.Local("team/reports/q3.txt"))); // the stub
            await rig.Engine.RecallAsync("team/reports/q3.txt");
        }
        finally
        {
            _ = Umask(umask);
        }

        Assert.Equal(BucketSyncFolderMode, File.GetUnixFileMode(rig.Local("team")));
        Assert.Equal(BucketSyncFolderMode, File.GetUnixFileMode(rig.Local("team/reports")));
        Assert.Equal(ReadableFile, File.GetUnixFileMode(rig.Local("team/reports/q3.txt")));
        Assert.Equal("another tool's report"u8.ToArray(), await rig.ReadAsync("team/reports/q3.txt"));
    }

    private const UnixFileMode BucketSyncFolderMode = Drives.BucketSync.FolderMode;

    [LibraryImport("libc", EntryPoint = "umask")]
    private static partial uint Umask(uint mask);
}
