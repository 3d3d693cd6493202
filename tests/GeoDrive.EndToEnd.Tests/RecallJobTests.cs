using System.Globalization;
using System.Management.Automation;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Scheduled recall jobs through the real service, administered from PowerShell. The service runs
/// on the test-only file clock (--test-clock): the test writes the time, the service's scheduler
/// (ticking every 200 ms) acts on it. Starts Monday 2026-01-05 09:00 UTC; the jobs read their
/// schedules in UTC.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class RecallJobTests : ServiceTests
{
    private readonly S3ServerFixture _s3;
    private readonly string _clockFile;

    public RecallJobTests(S3ServerFixture s3)
    {
        _s3 = s3;
        _clockFile = Path.Combine(Service.Root, "clock.txt");
        SetClock(new DateTimeOffset(2026, 1, 5, 9, 0, 0, TimeSpan.Zero));
        Service.ExtraArguments = ["--test-clock", _clockFile];
    }

    private void SetClock(DateTimeOffset time)
    {
        var temp = _clockFile + ".tmp";
        File.WriteAllText(temp, time.ToString("O", CultureInfo.InvariantCulture));
        File.Move(temp, _clockFile, overwrite: true);
        // The service notices the change by the file's write time; make each write a new one.
        File.SetLastWriteTimeUtc(_clockFile, DateTime.UtcNow.AddSeconds(Interlocked.Increment(ref _writes)));
    }

    private int _writes;

    private PSObject Job(DriveScenario d, string job) => TryJob(d, job) ?? throw new InvalidOperationException($"no job {job}: {string.Join("; ", Ps.LastErrors)}");

    /// <summary>The job, or null while the drive is not (yet) running, e.g. just after a restart.</summary>
    private PSObject? TryJob(DriveScenario d, string job) =>
        Ps.Invoke("Get-CloudRecallJob -Drive $name -Name $job", new Dictionary<string, object?> { ["name"] = d.Name, ["job"] = job }).SingleOrDefault();

    private static T Prop<T>(PSObject o, string name) => (T)o.Properties[name].Value;

    [Fact]
    public async Task Jobs_from_a_policy_and_from_Register_run_at_their_times_and_a_missed_one_runs_once_after_a_restart()
    {
        var policy = DriveScenario.Policy(settle: "0s") + "\n  recallJobs: [ { name: morning-prewarm, paths: [\"Active/**\"], schedule: \"0 6 * * 1-5\", timeZone: UTC } ]\n";
        using var d = new DriveScenario(_s3, policy);
        Ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
        Assert.Empty(Ps.LastErrors);
        Directory.CreateDirectory(d.Mounted("Active"));
        Directory.CreateDirectory(d.Mounted("Other"));
        var a = DriveRig.RandomBytes(300_000, 1);
        var b = DriveRig.RandomBytes(200_000, 2);
        await File.WriteAllBytesAsync(d.Mounted("Active/a.bin"), a);
        await File.WriteAllBytesAsync(d.Mounted("Other/b.bin"), b);
        await DriveScenario.EventuallyAsync(() => StateOf(d, "Active/a.bin") == "Cached" && StateOf(d, "Other/b.bin") == "Cached", "both Cached");
        Ps.Invoke("Invoke-ForceStub -Drive $name -Path '**' -Confirm:$false", d.Variables());
        Assert.Equal(0, DriveScenario.AllocatedBlocks(d.Cached("Active/a.bin")));

        var registered = Ps.Invoke("Register-CloudRecallJob -Drive $name -Name other -Path Other -Recurse -Schedule '30 6 * * *' -TimeZone UTC", d.Variables()).Single();
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(new DateTimeOffset(2026, 1, 6, 6, 30, 0, TimeSpan.Zero), Prop<DateTimeOffset?>(registered, "NextRun"));

        // Both kinds show, with their source; the pipeline from Get-CloudDrive works.
        var jobs = Ps.Invoke("Get-CloudDrive -Name $name | Get-CloudRecallJob", d.Variables());
        Assert.Equal(["morning-prewarm", "other"], jobs.Select(j => Prop<string>(j, "Name")));
        Assert.Equal(["Policy", "Registered"], jobs.Select(j => Prop<string>(j, "Source")));
        Assert.Contains("policy.yaml", Prop<string>(jobs[0], "DeclaredAt"), StringComparison.Ordinal);
        Assert.Equal(new DateTimeOffset(2026, 1, 6, 6, 0, 0, TimeSpan.Zero), Prop<DateTimeOffset?>(jobs[0], "NextRun"));

        // Refusals a user meets, each with its id.
        var policyJob = Ps.InvokeExpectingError("Unregister-CloudRecallJob -Drive $name -Name morning-prewarm -Confirm:$false", d.Variables());
        Assert.Equal("RecallJobDeclaredInPolicy,GeoDrive.Commands.UnregisterCloudRecallJobCommand", policyJob.FullyQualifiedErrorId);
        Assert.Contains("spec.recallJobs", policyJob.Exception.Message, StringComparison.Ordinal);
        Assert.Equal("DriveNotFound,GeoDrive.Commands.GetCloudRecallJobCommand", Ps.InvokeExpectingError("Get-CloudRecallJob -Drive nosuchdrive").FullyQualifiedErrorId);
        Assert.Equal("DriveNotFound,GeoDrive.Commands.RegisterCloudRecallJobCommand",
            Ps.InvokeExpectingError("Register-CloudRecallJob -Drive nosuchdrive -Name x -Path a -Schedule '@daily'").FullyQualifiedErrorId);
        Assert.Equal("InvalidCron,GeoDrive.Commands.RegisterCloudRecallJobCommand",
            Ps.InvokeExpectingError("Register-CloudRecallJob -Drive $name -Name x -Path a -Schedule '0 6 * * 8'", d.Variables()).FullyQualifiedErrorId);
        Assert.Equal("RecallJobExists,GeoDrive.Commands.RegisterCloudRecallJobCommand",
            Ps.InvokeExpectingError("Register-CloudRecallJob -Drive $name -Name OTHER -Path a -Schedule '@daily'", d.Variables()).FullyQualifiedErrorId);
        Ps.Invoke("Unregister-CloudRecallJob -Drive $name -Name other -WhatIf", d.Variables());
        Assert.Equal(2, Ps.Invoke("Get-CloudRecallJob -Drive $name", d.Variables()).Count);

        // Tuesday 06:00: the policy's job runs, the registered one (06:30) not yet.
        SetClock(new DateTimeOffset(2026, 1, 6, 6, 0, 0, TimeSpan.Zero));
        await DriveScenario.EventuallyAsync(() => Prop<string?>(Job(d, "morning-prewarm"), "LastResult") == "Succeeded", "morning-prewarm ran");
        var morning = Job(d, "morning-prewarm");
        Assert.Equal((1, 300_000L, 0, 1), (Prop<int>(morning, "Files"), Prop<long>(morning, "Bytes"), Prop<int>(morning, "Failures"), Prop<int>(morning, "RunCount")));
        Assert.Equal(a, await File.ReadAllBytesAsync(d.Cached("Active/a.bin")));
        Assert.Null(Prop<string?>(Job(d, "other"), "LastResult"));
        Assert.Equal("Stubbed", StateOf(d, "Other/b.bin"));

        // The service is down over 06:30; started again at 09:00 it runs the missed job once.
        await RestartServiceAsync(() => SetClock(new DateTimeOffset(2026, 1, 6, 9, 0, 0, TimeSpan.Zero)));
        await DriveScenario.EventuallyAsync(() => TryJob(d, "other") is { } j && Prop<string?>(j, "LastResult") == "Succeeded", "the missed job ran after the restart");
        await Task.Delay(1000); // five more scheduler passes on the same clock: no second run
        var other = Job(d, "other");
        Assert.Equal((1, 200_000L, 1), (Prop<int>(other, "Files"), Prop<long>(other, "Bytes"), Prop<int>(other, "RunCount")));
        Assert.Equal(new DateTimeOffset(2026, 1, 6, 9, 0, 0, TimeSpan.Zero), Prop<DateTimeOffset?>(other, "LastRun"));
        Assert.Equal(new DateTimeOffset(2026, 1, 7, 6, 30, 0, TimeSpan.Zero), Prop<DateTimeOffset?>(other, "NextRun"));
        Assert.Equal(1, Prop<int>(Job(d, "morning-prewarm"), "RunCount"));
        Assert.Equal(b, await File.ReadAllBytesAsync(d.Cached("Other/b.bin")));

        Ps.Invoke("Get-CloudRecallJob -Drive $name -Name other | Unregister-CloudRecallJob -Confirm:$false", d.Variables());
        Assert.Empty(Ps.LastErrors);
        Assert.Equal(["morning-prewarm"], Ps.Invoke("Get-CloudRecallJob -Drive $name", d.Variables()).Select(j => Prop<string>(j, "Name")));
    }
}
