using System.Management.Automation;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>Get-CloudDriveEvent and Set-CloudFile -Pin/-Unpin through the real service and mount.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class EventAndPinTests(GeoDrive.TestSupport.S3ServerFixture s3) : ServiceTests
{
    private static string[] Paths(IEnumerable<PSObject> events) => events.Select(e => $"{e.Properties["Kind"].Value} {e.Properties["Path"].Value}").ToArray();

    [Fact]
    public async Task Uploads_stubs_and_recalls_are_events_that_kind_path_time_and_newest_select()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        await File.WriteAllTextAsync(d.Mounted("notes.txt"), "notes");
        await File.WriteAllTextAsync(d.Mounted("scan.pdf"), "a scanned page");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "notes.txt") == "Cached" && StateOf(d, "scan.pdf") == "Cached", "both Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path scan.pdf -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        await Task.Delay(50);
        var beforeRecall = (DateTime)Ps.Invoke("[DateTime]::Now").Single().BaseObject;
        await Task.Delay(50);
        Assert.Equal("a scanned page", await File.ReadAllTextAsync(d.Mounted("scan.pdf")));

        var uploads = Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Upload", d.Variables());
        Assert.Equal(["Upload notes.txt", "Upload scan.pdf"], Paths(uploads).Order());
        Assert.All(uploads, e => Assert.Equal("GeoDrive.Api.DriveEventInfo", e.TypeNames[0]));

        var pdf = Ps.Invoke("Get-CloudDrive -Name $name | Get-CloudDriveEvent -Kind Stub, Recall -Path *.pdf", d.Variables());
        Assert.Equal(["Recall scan.pdf", "Stub scan.pdf"], Paths(pdf));

        Assert.Equal(["Recall scan.pdf"], Paths(Ps.Invoke("Get-CloudDriveEvent -Drive $name -Newest 1", d.Variables())));
        var vars = d.Variables();
        vars["t"] = beforeRecall;
        Assert.Equal(["Recall scan.pdf"], Paths(Ps.Invoke("Get-CloudDriveEvent -Drive $name -After $t -Kind Recall,Stub,Upload", vars)));
        Assert.Equal(["Stub scan.pdf", "Upload notes.txt", "Upload scan.pdf"], Paths(Ps.Invoke("Get-CloudDriveEvent -Drive $name -Before $t -Kind Recall,Stub,Upload", vars)).Order());
        Assert.Empty(Ps.Invoke("Get-CloudDriveEvent -Drive $name -Path 'nothing/**'", d.Variables()));

        var error = Ps.InvokeExpectingError("Get-CloudDriveEvent -Drive nosuchdrive");
        Assert.Equal("DriveNotFound,GeoDrive.Commands.GetCloudDriveEventCommand", error.FullyQualifiedErrorId);
    }

    [Fact]
    public async Task A_pinned_stub_is_recalled_refused_by_force_stub_without_Force_and_stubbed_again_once_unpinned()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        await File.WriteAllTextAsync(d.Mounted("plan.txt"), "the plan");
        await DriveScenario.EventuallyAsync(() => StateOf(d, "plan.txt") == "Cached", "plan.txt Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path plan.txt -Confirm:$false", d.Variables());
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("plan.txt")));

        var pinned = Ps.Invoke("Get-CloudFile -Drive $name -Path plan.txt | Set-CloudFile -Pin -PassThru", d.Variables()).Single();

        Assert.Empty(Ps.LastErrors);
        Assert.Equal(("Cached", true, "Cmdlet"), ((string)pinned.Properties["State"].Value, (bool)pinned.Properties["Pinned"].Value, (string)pinned.Properties["PinnedBy"].Value));
        Assert.Equal("the plan", await File.ReadAllTextAsync(d.Cached("plan.txt")));

        var refused = Ps.InvokeExpectingError("Invoke-ForceStub -Drive $name -Path plan.txt -Confirm:$false", d.Variables());
        Assert.Equal("FilePinned,GeoDrive.Commands.InvokeForceStubCommand", refused.FullyQualifiedErrorId);
        Assert.Contains("Set-CloudFile -Unpin", refused.Exception.Message, StringComparison.Ordinal);
        Assert.Equal("Cached", StateOf(d, "plan.txt"));

        Ps.Invoke("Set-CloudFile -Drive $name -Path plan.txt -Unpin -WhatIf", d.Variables());
        Assert.True((bool)Ps.Invoke("(Get-CloudFile -Drive $name -Path plan.txt).Pinned", d.Variables()).Single().BaseObject);

        var unpinned = Ps.Invoke("Set-CloudFile -Drive $name -Path plan.txt -Unpin -PassThru", d.Variables()).Single();
        Assert.False((bool)unpinned.Properties["Pinned"].Value);
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path plan.txt -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal("Stubbed", StateOf(d, "plan.txt"));

        var missing = Ps.InvokeExpectingError("Set-CloudFile -Drive $name -Path nothing.txt -Pin", d.Variables());
        Assert.Equal("FileNotFound,GeoDrive.Commands.SetCloudFileCommand", missing.FullyQualifiedErrorId);
    }
}

/// <summary>Tab completion of drive names, asked of the running service, on every -Drive and -Name.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class DriveNameCompletionTests(GeoDrive.TestSupport.S3ServerFixture s3) : ServiceTests
{
    [Theory]
    [InlineData("Get-CloudDriveEvent -Drive ")]
    [InlineData("Set-CloudFile -Pin -Path x -Drive ")]
    [InlineData("Get-CloudFile -Drive ")]
    [InlineData("Get-CloudDrive -Name ")]
    [InlineData("Remove-CloudDrive -Name ")]
    public void Drive_names_complete_with_Tab(string line)
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy());
        Ps.Invoke(DriveScenario.NewDriveScript.Replace("-PolicyPath $policy", "-PolicyPath $policy -NoMount", StringComparison.Ordinal), d.Variables());
        Assert.Empty(Ps.LastErrors);
        var typed = line + d.Name[..3];

        var completions = Ps.Invoke("(TabExpansion2 -inputScript $typed -cursorColumn $typed.Length).CompletionMatches.CompletionText",
            new Dictionary<string, object?> { ["typed"] = typed }).Select(o => o.ToString()).ToList();

        Assert.Contains(d.Name, completions);
    }
}
