using GeoDrive.Api;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Service.Drives;
using GeoDrive.Service.FrontEnds;
using GeoDrive.Service.Hosting;
using GeoDrive.Service.Hosting.Windows;
using GeoDrive.TestSupport;
using Microsoft.Extensions.Logging.Abstractions;

namespace GeoDrive.Service.Tests;

/// <summary>
/// The registry and DriveHost with a front end that serves the cache in place, as ProjFS does on
/// Windows: a stand-in (ProjFS runs only there), on a real S3 server and a real LiteDB index. It shows
/// the wiring the Windows service gets: no mount folder, the engine's state outside the cache, drive
/// events to the platform's log, the backup exclusion kept and removed.
/// </summary>
public sealed class InPlaceDriveTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IAsyncLifetime
{
    private readonly TempDirectory _temp = new("service");
    private readonly InPlaceStandIn _frontEnd = new();
    private readonly RecordingBackup _backup = new();
    private readonly List<(string Drive, DriveEvent Event)> _events = [];
    private DriveRegistry _registry = null!;

    private string Home => Path.Combine(_temp.Path, "home");

    public Task InitializeAsync()
    {
        _frontEnd.Home = Home;
        var platform = new DrivePlatform
        {
            FrontEnd = _frontEnd,
            DriveEvents = (drive, e) =>
            {
                lock (_events)
                {
                    _events.Add((drive, e));
                }
            },
            Backup = _backup,
        };
        var options = new ServiceOptions { HomePath = Home, SocketPath = Path.Combine(_temp.Path, "geodrive.sock") };
        _registry = new DriveRegistry(options, SystemClock.Instance, NullLoggerFactory.Instance, platform);
        return Task.CompletedTask;
    }

    public async Task DisposeAsync()
    {
        await _registry.StopAsync(CancellationToken.None);
        _temp.Dispose();
    }

    private NewDriveRequest Request(string name, string cache, string mount = "", bool includeCacheInBackup = false) => new()
    {
        Name = name,
        CachePath = cache,
        MountPath = mount,
        Endpoint = s3.Endpoint,
        Bucket = s3.CreateBucket(),
        AccessKey = s3.AccessKey,
        SecretKey = s3.SecretKey,
        IncludeCacheInBackup = includeCacheInBackup,
    };

    [Fact]
    public async Task A_drive_served_in_place_has_no_mount_folder_and_keeps_its_state_out_of_the_cache()
    {
        var cache = Path.Combine(_temp.Path, "finance");

        var info = await _registry.CreateAsync(Request("finance", cache), CancellationToken.None);

        Assert.Equal(cache, info.MountPath);
        Assert.True(info.Mounted);
        Assert.Equal(1, _frontEnd.Mounts);
        Assert.True(File.Exists(Path.Combine(Home, "drives", "finance", "index.db")));
        Assert.False(Directory.Exists(Path.Combine(cache, ".geodrive")));
        Assert.Empty(Directory.EnumerateFileSystemEntries(cache));
        Assert.Equal(Path.Combine(Home, "drives", "finance"), _frontEnd.Prepared.Single().StatePath);
    }

    [Fact]
    public async Task A_mount_path_other_than_the_cache_is_refused_and_the_cache_path_itself_is_accepted()
    {
        var cache = Path.Combine(_temp.Path, "scans");

        var refused = await Assert.ThrowsAsync<GeoDriveException>(() => _registry.CreateAsync(Request("scans", cache, mount: Path.Combine(_temp.Path, "elsewhere")), CancellationToken.None));
        Assert.Equal(ErrorIds.InvalidRequest, refused.ErrorId);
        Assert.Contains("cache folder is the drive", refused.Message, StringComparison.Ordinal);

        var info = await _registry.CreateAsync(Request("scans", cache, mount: cache + Path.DirectorySeparatorChar), CancellationToken.None);
        Assert.Equal(cache, info.MountPath);
    }

    [Fact]
    public async Task Drive_events_reach_the_platforms_log_with_the_drives_name()
    {
        await _registry.CreateAsync(Request("media", Path.Combine(_temp.Path, "media")), CancellationToken.None);

        (string Drive, DriveEvent Event) started;
        lock (_events)
        {
            started = Assert.Single(_events, e => e.Event.Kind == DriveEventKind.Service);
        }
        Assert.Equal("media", started.Drive);
        var entry = EventLogEntries.For(started.Drive, started.Event);
        Assert.Equal(EventLogEntries.DriveStarted, entry?.EventId);
        Assert.StartsWith("Drive 'media': Drive started", entry?.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_backup_exclusion_follows_the_drive_and_its_opt_out_and_goes_with_it()
    {
        await _registry.CreateAsync(Request("excluded", Path.Combine(_temp.Path, "excluded")), CancellationToken.None);
        await _registry.CreateAsync(Request("included", Path.Combine(_temp.Path, "included"), includeCacheInBackup: true), CancellationToken.None);

        Assert.False(_backup.Applied.Single(d => d.Name == "excluded").IncludeCacheInBackup);
        Assert.True(_backup.Applied.Single(d => d.Name == "included").IncludeCacheInBackup);
        Assert.NotNull(BackupExclusion.Desired(_backup.Applied.Single(d => d.Name == "excluded").CachePath, false));

        await _registry.RemoveAsync("excluded", CancellationToken.None);
        Assert.Equal(["excluded"], _backup.Removed);
        // Kept across restarts: the definition on disk carries the opt-out.
        Assert.Contains("\"includeCacheInBackup\": true", await File.ReadAllTextAsync(Path.Combine(Home, "drives.json")), StringComparison.Ordinal);
    }

    /// <summary>Stand-in for ProjFsFrontEnd (Windows only): the same layout, a mount that only counts.</summary>
    private sealed class InPlaceStandIn : IDriveFrontEnd
    {
        public string Home { get; set; } = "";

        public int Mounts { get; private set; }

        public List<FrontEndContext> Prepared { get; } = [];

        public FrontEndKind Kind => FrontEndKind.ProjFS;

        public bool ServesCacheInPlace => true;

        public string StatePath(DriveDefinition definition) => DriveFrontEnds.StateOutsideCache(Home, definition.Name);

        public void Prepare(FrontEndContext drive)
        {
            Prepared.Add(drive);
            drive.Engine.LocalStubs = NoStubsWhileDismounted.Instance;
        }

        public IDriveMount Mount(FrontEndContext drive)
        {
            Mounts++;
            return new Unmounted();
        }

        private sealed class Unmounted : IDriveMount
        {
            public void Unmount()
            {
            }
        }
    }

    private sealed class RecordingBackup : IBackupExclusions
    {
        public List<DriveDefinition> Applied { get; } = [];

        public List<string> Removed { get; } = [];

        public void Apply(DriveDefinition definition) => Applied.Add(definition);

        public void Remove(string driveName) => Removed.Add(driveName);
    }
}
