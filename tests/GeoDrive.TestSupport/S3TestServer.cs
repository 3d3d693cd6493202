using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Amazon.Runtime;
using Amazon.S3;

namespace GeoDrive.TestSupport;

/// <summary>A real S3 server on 127.0.0.1 for tests, with a raw SDK client to make buckets and check objects.</summary>
public abstract class S3TestServer : IDisposable
{
    private AmazonS3Client? _client;

    public string Endpoint { get; protected set; } = "";
    public string AccessKey { get; protected set; } = "";
    public string SecretKey { get; protected set; } = "";

    /// <summary>A raw AWSSDK client on this server (not GeoDrive's store): for set-up and cross-checks.</summary>
    public AmazonS3Client Client => _client ??= new AmazonS3Client(new BasicAWSCredentials(AccessKey, SecretKey), new AmazonS3Config
    {
        ServiceURL = Endpoint,
        ForcePathStyle = true,
        AuthenticationRegion = "us-east-1",
        RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
        ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,
    });

    /// <summary>Creates a bucket with a unique name and returns the name.</summary>
    public string CreateBucket()
    {
        var name = "t-" + Guid.NewGuid().ToString("N")[..20];
        Client.PutBucketAsync(name).GetAwaiter().GetResult();
        return name;
    }

    public void Dispose()
    {
        _client?.Dispose();
        Stop();
        GC.SuppressFinalize(this);
    }

    protected abstract void Stop();

    protected static string RunScript(string script, params string[] args)
    {
        var psi = new ProcessStartInfo("bash", [Path.Combine(RepositoryRoot.Path, "scripts", "s3", script), .. args])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{script} failed ({process.ExitCode}): {stderr.Result}{stdout.Result}");
        }
        return stdout.Result;
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}

/// <summary>
/// The quick S3 server: moto on a free port, started for the fixture and stopped after it. With
/// GEODRIVE_TEST_S3=ceph every test using it runs against Ceph RGW instead.
/// </summary>
public sealed class S3ServerFixture : S3TestServer
{
    private readonly string? _pidFile;

    public S3ServerFixture()
    {
        if (Environment.GetEnvironmentVariable("GEODRIVE_TEST_S3") == "ceph")
        {
            CephS3Fixture.Start(this);
            return;
        }
        // An S3 server someone else started (the Windows workflow runs moto as a step: no bash scripts there).
        if (Environment.GetEnvironmentVariable("GEODRIVE_TEST_S3_ENDPOINT") is { Length: > 0 } endpoint)
        {
            Endpoint = endpoint;
            AccessKey = Environment.GetEnvironmentVariable("GEODRIVE_TEST_S3_ACCESS_KEY") ?? "moto-access";
            SecretKey = Environment.GetEnvironmentVariable("GEODRIVE_TEST_S3_SECRET_KEY") ?? "moto-secret-key";
            return;
        }
        var port = FreePort();
        _pidFile = Path.Combine(Path.GetTempPath(), $"geodrive-moto-{port}.pid");
        RunScript("start-moto.sh", port.ToString(System.Globalization.CultureInfo.InvariantCulture), _pidFile);
        Endpoint = $"http://127.0.0.1:{port}";
        AccessKey = "moto-access";
        SecretKey = "moto-secret-key";
    }

    internal void UseCeph(string endpoint, string accessKey, string secretKey)
    {
        Endpoint = endpoint;
        AccessKey = accessKey;
        SecretKey = secretKey;
    }

    protected override void Stop()
    {
        if (_pidFile is not null)
        {
            RunScript("stop-moto.sh", _pidFile);
        }
    }
}

/// <summary>
/// Ceph's RADOS Gateway on 127.0.0.1:7480 (scripts/s3/start-ceph-s3.sh): checks SigV4 signatures.
/// Started if it is not running and left running for the next test run (stop-ceph-s3.sh stops it).
/// </summary>
public sealed class CephS3Fixture : S3TestServer
{
    public CephS3Fixture()
    {
        Start(this);
    }

    internal static void Start(S3TestServer server)
    {
        if (!File.Exists("/usr/bin/radosgw"))
        {
            throw new InvalidOperationException("Ceph's radosgw is not installed: run scripts/install-deps.sh (apt packages ceph-mon ceph-osd radosgw ceph-common).");
        }
        HoldCluster();
        RunScript("start-ceph-s3.sh");
        var endpoint = $"http://127.0.0.1:{Environment.GetEnvironmentVariable("S3_PORT") ?? "7480"}";
        var ak = Environment.GetEnvironmentVariable("S3_ACCESS_KEY") ?? "test";
        var sk = Environment.GetEnvironmentVariable("S3_SECRET_KEY") ?? "testsecret";
        switch (server)
        {
            case CephS3Fixture ceph:
                ceph.Endpoint = endpoint;
                ceph.AccessKey = ak;
                ceph.SecretKey = sk;
                break;
            case S3ServerFixture quick:
                quick.UseCeph(endpoint, ak, sk);
                break;
        }
    }

    protected override void Stop()
    {
        // Left running: starting Ceph costs ~15 s, and the next suite reuses it.
    }

    private static readonly Lock UsersGate = new();
    private static FileStream? _users;

    // A shared lock on "<cluster dir>.users" for the rest of this test process: `stop-ceph-s3.sh --if-unused`
    // (what `demo.sh stop` runs) leaves the cluster running while anyone holds it. .NET takes a shared
    // flock for a file opened with FileShare.ReadWrite, and it goes when the process ends.
    private static void HoldCluster()
    {
        lock (UsersGate)
        {
            var dir = Environment.GetEnvironmentVariable("CEPH_S3_DIR") is { Length: > 0 } d ? d : "/tmp/geodrive-ceph";
            _users ??= new FileStream(dir.TrimEnd('/') + ".users", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.ReadWrite);
        }
    }
}
