using System.Management.Automation;
using Amazon.S3;
using Amazon.S3.Model;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Get-CloudFileVersion and Restore-CloudFile on a bucket that keeps versions, through the real service and mount.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class FileVersionTests(GeoDrive.TestSupport.S3ServerFixture s3) : ServiceTests
{
    private List<PSObject> Versions(DriveScenario d, string path) =>
        [.. Ps.Invoke("Get-CloudFileVersion -Drive $name -Path $p", new Dictionary<string, object?> { ["name"] = d.Name, ["p"] = path })];

    private static long SizeOf(PSObject version) => (long)version.Properties["Size"].Value;

    private static string IdOf(PSObject version) => (string)version.Properties["VersionId"].Value;

    private static bool IsDeleteMarker(PSObject version) => (bool)version.Properties["IsDeleteMarker"].Value;

    [Fact]
    public async Task An_overwritten_version_and_a_deleted_file_come_back_as_new_versions_through_the_mount()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        await s3.Client.PutBucketVersioningAsync(new PutBucketVersioningRequest
        {
            BucketName = d.Bucket,
            VersioningConfig = new S3BucketVersioningConfig { Status = VersionStatus.Enabled },
        });
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Empty(Ps.LastWarnings);
        byte[][] contents = ["v1: the first draft"u8.ToArray(), "v2: a longer second draft of the budget"u8.ToArray(), "v3: final"u8.ToArray()];
        for (var i = 0; i < contents.Length; i++)
        {
            await File.WriteAllBytesAsync(d.Mounted("budget.txt"), contents[i]);
            var uploaded = i + 1;
            await DriveScenario.EventuallyAsync(() => StateOf(d, "budget.txt") == "Cached" && Versions(d, "budget.txt").Count == uploaded, $"version {uploaded} uploaded");
        }

        // Newest first, each with its own size.
        var versions = Versions(d, "budget.txt");
        Assert.Equal([contents[2].Length, contents[1].Length, contents[0].Length], versions.Select(SizeOf));
        Assert.Equal([true, false, false], versions.Select(v => (bool)v.Properties["IsLatest"].Value));
        Assert.All(versions, v => Assert.False(IsDeleteMarker(v)));
        Assert.All(versions, v => Assert.Equal("GeoDrive.Api.CloudFileVersionInfo", v.TypeNames[0]));
        var first = IdOf(versions[2]);

        // -WhatIf asks nothing of the bucket.
        Ps.Invoke("Restore-CloudFile -Drive $name -Path budget.txt -VersionId $v -WhatIf", new Dictionary<string, object?> { ["name"] = d.Name, ["v"] = first });
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(3, Versions(d, "budget.txt").Count);

        // The oldest version, piped from the listing, comes back as a fourth (current) version; the file is a stub of it.
        var restored = Ps.Invoke("(Get-CloudFileVersion -Drive $name -Path budget.txt)[2] | Restore-CloudFile -PassThru", d.Variables()).Single();
        Assert.Empty(Ps.LastErrors);
        Assert.Equal("Stubbed", restored.Properties["State"].Value);
        Assert.Equal(contents[0], await File.ReadAllBytesAsync(d.Mounted("budget.txt")));
        versions = Versions(d, "budget.txt");
        Assert.Equal(4, versions.Count);
        Assert.Equal(contents[0].Length, SizeOf(versions[0]));
        Assert.Equal(IdOf(versions[0]), restored.Properties["VersionId"].Value);
        Assert.Equal(first, IdOf(versions[3]));

        // Deleted through the mount: once the delete reaches the bucket, the newest entry is a delete marker.
        File.Delete(d.Mounted("budget.txt"));
        await DriveScenario.EventuallyAsync(() => Versions(d, "budget.txt") is [var newest, ..] && IsDeleteMarker(newest), "a delete marker in the bucket");
        var marker = Ps.InvokeExpectingError("(Get-CloudFileVersion -Drive $name -Path budget.txt)[0] | Restore-CloudFile", d.Variables());
        Assert.Equal("VersionNotFound,GeoDrive.Commands.RestoreCloudFileCommand", marker.FullyQualifiedErrorId);

        Ps.Invoke("Restore-CloudFile -Drive $name -Path budget.txt -Deleted", d.Variables());
        Assert.Empty(Ps.LastErrors);
        await DriveScenario.EventuallyAsync(() => File.Exists(d.Mounted("budget.txt")), "budget.txt back on the mount");
        Assert.Equal(contents[0], await File.ReadAllBytesAsync(d.Mounted("budget.txt")));
        versions = Versions(d, "budget.txt");
        Assert.Equal(6, versions.Count);
        Assert.False(IsDeleteMarker(versions[0]));
        Assert.Equal(contents[0].Length, SizeOf(versions[0]));

        var notDeleted = Ps.InvokeExpectingError("Restore-CloudFile -Drive $name -Path budget.txt -Deleted", d.Variables());
        Assert.Equal("FileNotDeleted,GeoDrive.Commands.RestoreCloudFileCommand", notDeleted.FullyQualifiedErrorId);
    }

    [Fact]
    public void New_CloudDrive_on_a_bucket_that_keeps_no_versions_warns_and_creates_the_drive()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());

        var drive = Ps.Invoke(DriveScenario.NewDriveScript.Replace("-PolicyPath $policy", "-PolicyPath $policy -NoMount", StringComparison.Ordinal), d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(d.Name, drive.Properties["Name"].Value);
        var warning = Assert.Single(Ps.LastWarnings).Message;
        Assert.Contains($"'{d.Bucket}' keeps no versions", warning, StringComparison.Ordinal);
    }
}
