using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Policies.Model;
using GeoDrive.Service.Drives;
using GeoDrive.Service.FrontEnds;
using GeoDrive.Service.Hosting;
using GeoDrive.TestSupport;

namespace GeoDrive.Service.Tests;

public sealed class FrontEndChoiceTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>
{
    private static DriveDefinition Definition(string cache) => new()
    {
        Name = "finance",
        CachePath = cache,
        MountPath = "/mnt/finance",
        Endpoint = "http://127.0.0.1:9",
        Bucket = "b",
    };

    [Fact]
    public void Windows_gets_ProjFS_and_every_other_OS_FUSE()
    {
        Assert.Equal(FrontEndKind.ProjFS, DriveFrontEnds.Choose(windows: true));
        Assert.Equal(FrontEndKind.Fuse, DriveFrontEnds.Choose(windows: false));
        Assert.Equal(OperatingSystem.IsWindows() ? FrontEndKind.ProjFS : FrontEndKind.Fuse, DriveFrontEnds.ForThisMachine("/var/lib/geodrive").Kind);
    }

    [Fact]
    public void FUSE_keeps_the_engines_state_in_the_cache_where_the_mount_hides_it()
    {
        var fuse = DriveFrontEnds.Create(FrontEndKind.Fuse, "/var/lib/geodrive");

        Assert.False(fuse.ServesCacheInPlace);
        Assert.Equal(Path.Combine("/srv/finance", ".geodrive"), fuse.StatePath(Definition("/srv/finance")));
        Assert.Same(typeof(FuseFrontEnd), DrivePlatform.Fuse().FrontEnd.GetType());
    }

    [Fact]
    public void A_drive_served_in_place_keeps_its_state_in_the_service_home_outside_every_cache()
    {
        var state = DriveFrontEnds.StateOutsideCache(Path.Combine("C:", "ProgramData", "GeoDrive"), "finance");

        Assert.Equal(Path.Combine("C:", "ProgramData", "GeoDrive", "drives", "finance"), state);
        if (!OperatingSystem.IsWindows())
        {
            Assert.Throws<PlatformNotSupportedException>(() => DriveFrontEnds.Create(FrontEndKind.ProjFS, "/var/lib/geodrive"));
        }
    }

    [Theory]
    [InlineData(RecallAction.Hydrate, OpenDecision.Local)]
    [InlineData(RecallAction.Stream, OpenDecision.Stream)]
    [InlineData(RecallAction.Deny, OpenDecision.Deny)]
    public void The_recall_gate_answers_with_the_process_rule(RecallAction action, OpenDecision decision) =>
        Assert.Equal(decision, IndexHydrationGate.Decide(action));

    [Fact]
    public async Task The_recall_gate_reads_the_drives_policy_and_records_a_hydrated_stub_as_Cached()
    {
        await using var rig = new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: gate }
            spec:
              upload: { settle: 30s }
              processExcludes:
                - { process: "MsMpEng.exe", recall: deny }
                - { process: "backup*", recall: stream }
                - { process: "<SYSTEM>", recall: deny }
            """);
        await rig.WriteAsync("a.bin", DriveRig.RandomBytes(3000, 3));
        rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await rig.Engine.TickAsync();
        await rig.Engine.StubAsync("a.bin");
        var gate = new IndexHydrationGate(rig.Engine, rig.Index);

        Assert.Equal(OpenDecision.Deny, await gate.DecideRecallAsync("a.bin", new Caller(100, "MsMpEng.exe")));
        Assert.Equal(OpenDecision.Stream, await gate.DecideRecallAsync("a.bin", new Caller(101, "backupagent.exe")));
        Assert.Equal(OpenDecision.Local, await gate.DecideRecallAsync("a.bin", new Caller(102, "excel.exe")));
        Assert.Equal(OpenDecision.Deny, await gate.DecideRecallAsync("a.bin", new Caller(4, "System", IsSystem: true)));

        gate.Hydrated("a.bin", new Caller(102, "excel.exe"));
        Assert.Equal(FileState.Cached, rig.StateOf("a.bin"));
    }

    [Fact]
    public async Task Without_its_root_served_a_ProjFS_drive_refuses_to_stub_and_the_file_stays_Cached_with_its_data()
    {
        await using var rig = new DriveRig(s3);
        var bytes = DriveRig.RandomBytes(4000, 4);
        await rig.WriteAsync("kept.bin", bytes);
        rig.Clock.Advance(TimeSpan.FromSeconds(31));
        await rig.Engine.TickAsync();
        rig.Engine.LocalStubs = NoStubsWhileDismounted.Instance;

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => rig.Engine.StubAsync("kept.bin"));

        Assert.Equal(ErrorIds.DriveNotMounted, refused.ErrorId);
        Assert.Equal(FileState.Cached, rig.StateOf("kept.bin"));
        Assert.Equal(bytes, await File.ReadAllBytesAsync(rig.Local("kept.bin")));
    }

    [Fact]
    public async Task The_projection_reads_a_folder_from_the_index_in_any_case()
    {
        await using var rig = new DriveRig(s3);
        await rig.WriteAsync("Projects/alpha/plan.txt", [1]);
        await rig.WriteAsync("Projects/beta.txt", [2]);
        await rig.WriteAsync("other.txt", [3]);
        var filesUnder = IndexProjection.FilesUnder(rig.Index);

        Assert.Equal(3, filesUnder("").Count());
        Assert.Equal(["Projects/alpha/plan.txt", "Projects/beta.txt"], filesUnder("Projects").Select(e => e.Path).Order(StringComparer.Ordinal));
        // Windows asked in another case: the whole index, which the projection matches case-insensitively.
        var projection = new GeoDrive.Mount.ProjFS.Projection.FileEntryProjection(filesUnder, rig.Engine.IsInternalPath);
        Assert.Equal(["alpha", "beta.txt"], projection.List("PROJECTS").Select(i => i.Name).Order(StringComparer.Ordinal));
    }
}
