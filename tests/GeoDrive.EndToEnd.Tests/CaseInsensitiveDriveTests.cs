using Amazon.S3.Model;
using GeoDrive.Engine.Layout;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Case-insensitive drives through the real service, FUSE mount and PowerShell (docs/decisions/0019-case-insensitive-drives.md):
/// a name in any case is one file, its key is in lower case with the name as written in metadata, another drive on the
/// bucket shows that name, keys of one name in two cases are shown once; a Linux drive made without the switch is as before.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class CaseInsensitiveDriveTests(GeoDrive.TestSupport.S3ServerFixture s3) : ServiceTests
{
    private static readonly TimeSpan UpdateWait = TimeSpan.FromSeconds(1);

    private static string Policy => """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: case-insensitive }
        spec:
          stubbing: { enabled: true, accessWait: 30d }
          upload: { settle: 0s, updateWait: 1s }
        """;

    private const string NewCaseInsensitiveDrive = DriveScenario.NewDriveScript + " -CaseInsensitive";

    /// <summary>The names an `ls` of the folder shows through the mount.</summary>
    private static string[] Ls(DriveScenario d, string folder = "") =>
        [.. Directory.GetFileSystemEntries(d.Mounted(folder)).Select(Path.GetFileName).Order(StringComparer.Ordinal)!];

    private bool CaseInsensitiveOf(DriveScenario d) => (bool)Ps.Invoke("(Get-CloudDrive -Name $name).CaseInsensitive", d.Variables()).Single().BaseObject;

    [Fact]
    public async Task A_name_in_any_case_is_one_file_whose_key_is_lower_case_and_whose_name_another_drive_on_the_bucket_shows()
    {
        using var d = new DriveScenario(s3, Policy);
        Ps.Invoke(NewCaseInsensitiveDrive, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.True(CaseInsensitiveOf(d));
        var first = GeoDrive.TestSupport.DriveRig.RandomBytes(20_000, 1);
        var second = GeoDrive.TestSupport.DriveRig.RandomBytes(30_000, 2);

        await File.WriteAllBytesAsync(d.Mounted("Report.TXT"), first);
        Assert.Equal(first, await File.ReadAllBytesAsync(d.Mounted("report.txt")));
        // Made again in another case: the existing file is opened and overwritten, as on NTFS.
        await File.WriteAllBytesAsync(d.Mounted("REPORT.txt"), second);
        Assert.Equal(["Report.TXT"], Ls(d));
        Assert.Equal(second, await File.ReadAllBytesAsync(d.Mounted("Report.TXT")));

        Directory.CreateDirectory(d.Mounted("Docs"));
        Directory.CreateDirectory(d.Mounted("DOCS"));
        await File.WriteAllTextAsync(d.Mounted("docs/Minutes.md"), "minutes");
        Assert.Equal(["Docs", "Report.TXT"], Ls(d));
        // A rename that changes only the case renames the file.
        File.Move(d.Mounted("DOCS/minutes.md"), d.Mounted("Docs/MINUTES.md"), overwrite: true);
        Assert.Equal(["MINUTES.md"], Ls(d, "Docs"));
        Assert.Equal("minutes", await File.ReadAllTextAsync(d.Mounted("docs/Minutes.MD")));

        await DriveScenario.EventuallyAsync(() => StateOf(d, "Report.TXT") == "Cached", "Report.TXT verified in the bucket", seconds: 30);
        var head = await d.Bucket_.HeadAsync("report.txt");
        Assert.NotNull(head);
        Assert.Equal("Report.TXT", head.Metadata[ObjectLayout.NameKey]);
        Assert.Null(await d.Bucket_.HeadAsync("Report.TXT"));
        Assert.Equal(second, await d.ObjectBytesAsync("report.txt"));

        using var other = new DriveScenario(s3, Policy);
        Ps.Invoke(NewCaseInsensitiveDrive, other.Variables(bucket: d.Bucket));
        Assert.Empty(Ps.LastErrors);
        Assert.Contains("Report.TXT", Ls(other));
        Assert.DoesNotContain("report.txt", Ls(other));
        Assert.Equal(second, await File.ReadAllBytesAsync(other.Mounted("REPORT.TXT")));
    }

    [Fact]
    public async Task Two_keys_that_differ_only_in_case_are_listed_once_through_the_mount_and_the_hidden_one_named_in_one_event()
    {
        using var d = new DriveScenario(s3, Policy);
        // Written by another tool before the drive was made.
        await d.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = d.Bucket, Key = "plan.txt", ContentBody = "lower" });
        await d.S3.Client.PutObjectAsync(new PutObjectRequest { BucketName = d.Bucket, Key = "Plan.txt", ContentBody = "upper" });
        Ps.Invoke(NewCaseInsensitiveDrive, d.Variables());
        Assert.Empty(Ps.LastErrors);

        Assert.Equal(["plan.txt"], Ls(d));
        Assert.Equal("lower", await File.ReadAllTextAsync(d.Mounted("PLAN.TXT")));
        await Task.Delay(UpdateWait); // the next listing asks the bucket again only after updateWait: that it names the key no second time is under test
        Assert.Equal(["plan.txt"], Ls(d));

        var hidden = Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Error", d.Variables())
            .Where(e => (string?)e.Properties["ErrorId"].Value == "ObjectNameTaken");
        var only = Assert.Single(hidden);
        Assert.Contains("'Plan.txt' is not shown", (string)only.Properties["Message"].Value, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_Linux_drive_made_without_the_switch_keeps_names_that_differ_only_in_case_apart_and_refuses_to_change_it()
    {
        using var d = new DriveScenario(s3, Policy);
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.False(CaseInsensitiveOf(d));

        await File.WriteAllTextAsync(d.Mounted("notes.txt"), "one");
        await File.WriteAllTextAsync(d.Mounted("NOTES.txt"), "two");

        Assert.Equal(["NOTES.txt", "notes.txt"], Ls(d));
        Assert.Equal("one", await File.ReadAllTextAsync(d.Mounted("notes.txt")));
        Assert.False(File.Exists(d.Mounted("Notes.txt")));
        await DriveScenario.EventuallyAsync(() => StateOf(d, "notes.txt") == "Cached" && StateOf(d, "NOTES.txt") == "Cached", "both verified in the bucket", seconds: 30);
        Assert.Equal("two"u8.ToArray(), await d.ObjectBytesAsync("NOTES.txt"));
        Assert.False((await d.Bucket_.HeadAsync("notes.txt"))!.Metadata.ContainsKey(ObjectLayout.NameKey));

        var refused = Ps.InvokeExpectingError("Set-CloudDrive -Name $name -CaseInsensitive -Confirm:$false", d.Variables());
        Assert.Equal("CaseSensitivityFixed,GeoDrive.Commands.SetCloudDriveCommand", refused.FullyQualifiedErrorId);
        Assert.Contains("New-CloudDrive", refused.ErrorDetails?.RecommendedAction ?? refused.ToString(), StringComparison.Ordinal);
    }
}
