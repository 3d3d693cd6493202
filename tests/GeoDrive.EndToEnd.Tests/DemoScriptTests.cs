using System.Diagnostics;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The README's first command, run as written (in its own folder, on a bucket of its own), so the demo never rots.
/// It runs on its default S3 server, Ceph RGW, which this class holds as a test run does (CephS3Fixture).
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class DemoScriptTests(CephS3Fixture ceph) : IDisposable, IClassFixture<CephS3Fixture>
{
    private readonly TempDirectory _temp = new("demo");
    private readonly string _bucket = "demo-" + Guid.NewGuid().ToString("N")[..12];

    private (int ExitCode, string Output) Demo(params string[] arguments)
    {
        var psi = new ProcessStartInfo("bash", ["scripts/demo.sh", .. arguments])
        {
            WorkingDirectory = RepoRoot.Path,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        psi.Environment["GEODRIVE_DEMO_DIR"] = _temp.Path;
        psi.Environment["GEODRIVE_DEMO_BUCKET"] = _bucket;
        psi.Environment.Remove("GEODRIVE_DEMO_S3");
        using var process = Process.Start(psi)!;
        var errors = process.StandardError.ReadToEndAsync();
        var output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, output + errors.Result);
    }

    private async Task<bool> CephAnswersAsync()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        try
        {
            return (await http.GetAsync(ceph.Endpoint)).IsSuccessStatusCode;
        }
        catch (HttpRequestException)
        {
            return false;
        }
    }

    [Fact]
    public async Task The_demo_walks_a_file_through_upload_stub_and_recall_on_Ceph_and_stops_cleanly()
    {
        var run = Demo();
        try
        {
            Assert.True(run.ExitCode == 0, run.Output);
            Assert.Contains($"New-CloudDrive demo -> {ceph.Endpoint} bucket '{_bucket}'", run.Output, StringComparison.Ordinal);
            Assert.Matches(@"after settle \+ upload:\s+state=Cached", run.Output);
            Assert.Matches(@"after Invoke-ForceStub:\s+state=Stubbed", run.Output);
            Assert.Contains("cache file blocks allocated: 0; size through the mount: 5 bytes", run.Output, StringComparison.Ordinal);
            Assert.Contains("Read back through the mount: 'hello'", run.Output, StringComparison.Ordinal);
            Assert.DoesNotContain(ceph.SecretKey, run.Output, StringComparison.Ordinal);
            var report = await ceph.Client.GetObjectMetadataAsync(_bucket, "report.txt");
            Assert.Equal(5, report.ContentLength);
        }
        finally
        {
            Demo("stop");
        }
        Assert.DoesNotContain(Path.Combine(_temp.Path, "mnt"), File.ReadAllText("/proc/mounts"), StringComparison.Ordinal);
        Assert.True(await CephAnswersAsync(), "the demo stopped a Ceph it did not start");
    }

    [Fact]
    public async Task Stopping_a_demo_that_started_Ceph_leaves_it_running_while_a_test_run_uses_it()
    {
        // As after `demo.sh` found no cluster and made one; this test process holds it, as every test run does.
        File.WriteAllText(Path.Combine(_temp.Path, "ceph.started"), "");

        var run = Demo("stop");

        Assert.True(run.ExitCode == 0, run.Output);
        Assert.Contains("in use by a test run", run.Output, StringComparison.Ordinal);
        Assert.True(await CephAnswersAsync(), "demo.sh stop stopped the Ceph a test run holds");
        Assert.True(File.Exists(Path.Combine(_temp.Path, "ceph.started")), "the demo forgot that it started Ceph, so no later stop would");
    }

    public void Dispose() => _temp.Dispose();
}
