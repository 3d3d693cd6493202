using System.Diagnostics;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;
using GeoDrive.State;
using GeoDrive.Storage.S3;

namespace GeoDrive.TestSupport;

/// <summary>
/// One drive's engine on real parts: a bucket on the test S3 server, a LiteDB index file in the
/// cache, a policy parsed from YAML, and a manual clock. Files are written straight into the cache
/// and reported through the front-end contract, as the FUSE mount would.
/// </summary>
public sealed class DriveRig : IAsyncDisposable
{
    public const string DefaultPolicy = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: engine-tests }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          upload: { settle: 30s }
          excludes: [ "**/*.tmp", "Scratch/" ]
        """;

    /// <summary>Files above 5 MiB move in 5 MiB parts and recall one range at a time (a test can name the moment between two).</summary>
    public const string FiveMiBRangesOneAtATime = """
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: { name: engine-tests-ranges }
        spec:
          stubbing: { enabled: true, accessWait: 1h }
          transfer: { multipart: { threshold: 5MiB, partSize: 5MiB, restoreThreads: 1 } }
        """;

    private readonly TempDirectory _temp = new("engine");
    private LiteDbFileIndex _index;

    /// <param name="cachePath">An empty folder for the cache (e.g. on a small volume of the test's own); a temp folder by default.</param>
    /// <param name="multipartThreshold">Files above this go up in parts (16 MiB each when lower than the default).</param>
    /// <param name="endpoint">Another way to the same server (e.g. a <see cref="FaultProxy"/>); the server's own by default.</param>
    /// <param name="stateOutsideCache">Keep the engine's state (index) in a folder beside the cache, as the Windows service does; in "&lt;cache&gt;/.geodrive" by default.</param>
    /// <param name="uploadThreads">Upload workers (transfer.uploadThreads).</param>
    /// <param name="hookedIndex">The engine's index is <see cref="Hooks"/> over the real one (see <see cref="HookedIndex"/>).</param>
    /// <param name="storeInFront">Wraps the real store for fault injection (e.g. holding PUTs); the engine talks to what it returns.</param>
    /// <param name="caseInsensitive">A case-insensitive drive (DriveEngineOptions.CaseInsensitive).</param>
    /// <param name="bucket">An existing bucket (a second drive on another drive's bucket); a new one by default.</param>
    /// <param name="meter">The instruments the engine reports on (a test's own, to read them alone); the shared one by default.</param>
    public DriveRig(S3TestServer s3, string? policyYaml = null, string? cachePath = null, long multipartThreshold = 64L << 20, string? endpoint = null, bool stateOutsideCache = false,
        int uploadThreads = 4, Func<GeoDrive.Core.Ports.IObjectStore, GeoDrive.Core.Ports.IObjectStore>? storeInFront = null, bool hookedIndex = false,
        bool caseInsensitive = false, string? bucket = null, GeoDrive.Engine.Metrics.EngineMeter? meter = null)
    {
        _caseInsensitive = caseInsensitive;
        _uploadThreads = uploadThreads;
        _storeInFront = storeInFront;
        _hookedIndex = hookedIndex;
        _meter = meter;
        S3 = s3;
        Bucket = bucket ?? s3.CreateBucket();
        CachePath = cachePath ?? _temp.CreateSubdirectory("cache");
        Directory.CreateDirectory(CachePath);
        StatePath = stateOutsideCache ? _temp.CreateSubdirectory("state") : Path.Combine(CachePath, DriveEngineOptions.InternalFolder);
        Store = new S3ObjectStore(new S3StoreOptions
        {
            Endpoint = new Uri(endpoint ?? s3.Endpoint),
            Bucket = Bucket,
            AccessKey = s3.AccessKey,
            SecretKey = s3.SecretKey,
            MultipartThreshold = multipartThreshold,
            PartSize = Math.Min(16L << 20, multipartThreshold),
        });
        Policy = Evaluator(policyYaml ?? DefaultPolicy);
        _index = OpenIndex();
        Engine = NewEngine();
    }

    public S3TestServer S3 { get; }
    public string Bucket { get; }
    public string CachePath { get; }

    /// <summary>The engine's own folder (index.db): "&lt;cache&gt;/.geodrive", or outside the cache (stateOutsideCache).</summary>
    public string StatePath { get; }

    public string IndexPath => Path.Combine(StatePath, "index.db");
    public S3ObjectStore Store { get; }
    public PolicyEvaluator Policy { get; private set; }
    public ManualClock Clock { get; } = new();
    public DriveEngine Engine { get; private set; }
    public Caller Caller { get; } = new(Environment.ProcessId, "engine-tests");

    public static PolicyEvaluator Evaluator(string yaml) =>
        new(EffectivePolicy.Merge([PolicyLoader.Parse(yaml, "test-policy.yaml")]));

    public string Local(string path) => Path.Combine(CachePath, path);

    /// <summary>Writes a file as an application would through the mount: create, write, close.</summary>
    public async Task WriteAsync(string path, byte[] content)
    {
        var local = Local(path);
        Directory.CreateDirectory(Path.GetDirectoryName(local)!);
        var existed = File.Exists(local);
        if (existed)
        {
            await Engine.OpenAsync(path, Caller, GeoDrive.Core.Ports.OpenIntent.Truncate);
        }
        await File.WriteAllBytesAsync(local, content);
        if (!existed)
        {
            Engine.Created(path, Caller, isDirectory: false);
        }
        await Engine.ClosedAsync(path, Caller, modified: true);
    }

    /// <summary>A file of random bytes written, uploaded and stubbed; returns its bytes.</summary>
    public async Task<byte[]> StubbedAsync(string path, int size, int seed)
    {
        var content = RandomBytes(size, seed);
        await WriteAsync(path, content);
        await Engine.UploadAsync(path);
        await Engine.StubAsync(path);
        return StateOf(path) == FileState.Stubbed ? content : throw new InvalidOperationException($"{path} is {StateOf(path)}, not Stubbed");
    }

    /// <summary>Opens and reads a file as an application would: the engine recalls a stub first.</summary>
    public async Task<byte[]> ReadAsync(string path)
    {
        await Engine.OpenAsync(path, Caller, GeoDrive.Core.Ports.OpenIntent.Read);
        var bytes = await File.ReadAllBytesAsync(Local(path));
        await Engine.ClosedAsync(path, Caller, modified: false);
        return bytes;
    }

    public async Task<byte[]?> ObjectBytesAsync(string key)
    {
        if (await Store.HeadAsync(key) is null)
        {
            return null;
        }
        using var buffer = new MemoryStream();
        await Store.GetAsync(key, buffer);
        return buffer.ToArray();
    }

    public FileState StateOf(string path) => Engine.GetFile(path)?.State ?? throw new InvalidOperationException($"no entry for {path}");

    /// <summary>Blocks allocated to a cache file, as `stat -c %b` reports them.</summary>
    public long AllocatedBlocks(string path)
    {
        using var stat = Process.Start(new ProcessStartInfo("stat", ["-c", "%b", Local(path)]) { RedirectStandardOutput = true })!;
        var output = stat.StandardOutput.ReadToEnd();
        stat.WaitForExit();
        return long.Parse(output.Trim(), System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>Hands the engine another policy, as a hot reload does.</summary>
    public void UsePolicy(string yaml)
    {
        Policy = Evaluator(yaml);
        Engine.UpdatePolicy(Policy);
    }

    /// <summary>
    /// Lets the engine's late-write grace since its start pass and ticks: deletes an earlier run owed, made once already,
    /// ask their keys once more and are done (docs/architecture.md, "The bucket journal").
    /// </summary>
    public async Task PassLateWriteGraceAsync()
    {
        Clock.Advance(Engine.Options.LateWriteGrace);
        await Engine.TickAsync();
    }

    /// <summary>Simulates a restart of the service: a new index handle and engine over the same cache.</summary>
    public async Task<RecoveryReport> RestartAsync()
    {
        await Engine.DisposeAsync();
        _index.Dispose();
        _index = OpenIndex();
        Engine = NewEngine();
        return await Engine.StartAsync();
    }

    public LiteDbFileIndex Index => _index;

    public static byte[] RandomBytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>The zone the rig's engine reads schedules in (throttle windows, recall jobs): fixed, whatever the machine's.</summary>
    public TimeZoneInfo TimeZone { get; } = TimeZoneInfo.Utc;

    private LiteDbFileIndex OpenIndex() => LiteDbFileIndex.Open(IndexPath);

    private readonly int _uploadThreads;
    private readonly bool _caseInsensitive;
    private readonly GeoDrive.Engine.Metrics.EngineMeter? _meter;
    private readonly Func<GeoDrive.Core.Ports.IObjectStore, GeoDrive.Core.Ports.IObjectStore>? _storeInFront;
    private readonly bool _hookedIndex;

    /// <summary>The hooks over the engine's index (with hookedIndex; replaced at each restart).</summary>
    public HookedIndex? Hooks { get; private set; }

    private DriveEngine NewEngine() =>
        new(new DriveEngineOptions { Name = "test", CachePath = CachePath, InternalPath = StatePath, TimeZone = TimeZone, UploadConcurrency = _uploadThreads, CaseInsensitive = _caseInsensitive, Meter = _meter },
            _storeInFront?.Invoke(Store) ?? Store, _hookedIndex ? Hooks = new HookedIndex(_index) : _index, Policy, Clock);

    public async ValueTask DisposeAsync()
    {
        await Engine.DisposeAsync();
        _index.Dispose();
        Store.Dispose();
        _temp.Dispose();
    }
}
