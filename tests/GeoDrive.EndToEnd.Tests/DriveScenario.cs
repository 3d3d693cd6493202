using System.Diagnostics;
using System.Globalization;
using GeoDrive.Storage.S3;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class EndToEndCollection : ICollectionFixture<S3ServerFixture>
{
    public const string Name = "end-to-end";
}

/// <summary>Per-test folders, policy file and names for one drive, plus checks from outside GeoDrive.</summary>
public sealed class DriveScenario : IDisposable
{
    private static int _counter;
    private readonly TempDirectory _temp = new("e2e");

    public DriveScenario(S3TestServer s3, string policyYaml)
    {
        S3 = s3;
        Name = "drive" + Interlocked.Increment(ref _counter).ToString(CultureInfo.InvariantCulture);
        Bucket = s3.CreateBucket();
        CachePath = _temp.Combine("cache");
        MountPath = _temp.CreateSubdirectory("mnt");
        PolicyPath = _temp.Combine("policy.yaml");
        File.WriteAllText(PolicyPath, policyYaml);
        Bucket_ = new S3ObjectStore(new S3StoreOptions { Endpoint = new Uri(s3.Endpoint), Bucket = Bucket, AccessKey = s3.AccessKey, SecretKey = s3.SecretKey });
    }

    public S3TestServer S3 { get; }
    public string Name { get; }
    public string Bucket { get; }
    public string CachePath { get; }
    public string MountPath { get; }
    public string PolicyPath { get; }

    /// <summary>A plain S3 client on the drive's bucket, to check what really is there.</summary>
    public S3ObjectStore Bucket_ { get; }

    public string Root => _temp.Path;

    public static string Policy(string settle = "2s", string accessWait = "30d", string excludes = "[ \"**/*.tmp\" ]") => $"""
        apiVersion: geodrive/v1
        kind: CloudDrivePolicy
        metadata: {"{"} name: e2e {"}"}
        spec:
          stubbing: {"{"} enabled: true, accessWait: {accessWait} {"}"}
          upload: {"{"} settle: {settle} {"}"}
          excludes: {excludes}
        """;

    public Dictionary<string, object?> Variables(string? endpoint = null, string? secret = null, string? bucket = null) => new()
    {
        ["name"] = Name,
        ["cache"] = CachePath,
        ["mnt"] = MountPath,
        ["endpoint"] = endpoint ?? S3.Endpoint,
        ["bucket"] = bucket ?? Bucket,
        ["policy"] = PolicyPath,
        ["ak"] = S3.AccessKey,
        ["sk"] = secret ?? S3.SecretKey,
    };

    public const string NewDriveScript = """
        $cred = [pscredential]::new($ak, [System.Net.NetworkCredential]::new('', $sk).SecurePassword)
        New-CloudDrive -Name $name -CachePath $cache -MountPath $mnt -Endpoint $endpoint -Bucket $bucket -Credential $cred -PolicyPath $policy
        """;

    /// <summary>New-CloudDrive for this scenario on <paramref name="service"/>, over <paramref name="bucket"/> (another scenario's for a second site or host).</summary>
    public void CreateOn(ServiceProcess service, string bucket)
    {
        using var ps = new PowerShellSession(service.SocketPath);
        ps.Invoke(NewDriveScript, Variables(bucket: bucket));
        Assert.True(ps.LastErrors.Count == 0, string.Join("\n", ps.LastErrors));
    }

    public string Mounted(string path) => Path.Combine(MountPath, path);

    public string Cached(string path) => Path.Combine(CachePath, path);

    public static long AllocatedBlocks(string file)
    {
        using var stat = Process.Start(new ProcessStartInfo("stat", ["-c", "%b", file]) { RedirectStandardOutput = true })!;
        var output = stat.StandardOutput.ReadToEnd();
        stat.WaitForExit();
        return long.Parse(output.Trim(), CultureInfo.InvariantCulture);
    }

    public async Task<byte[]?> ObjectBytesAsync(string key)
    {
        if (await Bucket_.HeadAsync(key) is null)
        {
            return null;
        }
        using var buffer = new MemoryStream();
        await Bucket_.GetAsync(key, buffer);
        return buffer.ToArray();
    }

    /// <summary>Waits (bounded) for a condition the real service reaches on its own clock.</summary>
    public static async Task EventuallyAsync(Func<bool> condition, string what, int seconds = 60)
    {
        var deadline = DateTime.UtcNow.AddSeconds(seconds);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"not reached within {seconds} s: {what}");
            }
            await Task.Delay(100);
        }
    }

    public void Dispose()
    {
        Bucket_.Dispose();
        _temp.Dispose();
    }
}
