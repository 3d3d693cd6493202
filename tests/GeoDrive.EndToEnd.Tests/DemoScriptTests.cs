using System.Diagnostics;
using System.Globalization;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>The README's first command, run as written (in its own folder and port), so the demo never rots.</summary>
[Collection(EndToEndCollection.Name)]
public sealed class DemoScriptTests : IDisposable
{
    private readonly TempDirectory _temp = new("demo");

    private (int ExitCode, string Output) Demo(params string[] arguments)
    {
        var psi = new ProcessStartInfo("bash", ["scripts/demo.sh", .. arguments])
        {
            WorkingDirectory = RepoRoot.Path,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        psi.Environment["GEODRIVE_DEMO_DIR"] = _temp.Path;
        psi.Environment["GEODRIVE_DEMO_PORT"] = S3TestServer.FreePort().ToString(CultureInfo.InvariantCulture);
        using var process = Process.Start(psi)!;
        var errors = process.StandardError.ReadToEndAsync();
        var output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, output + errors.Result);
    }

    [Fact]
    public void The_demo_walks_a_file_through_upload_stub_and_recall_and_stops_cleanly()
    {
        var run = Demo();
        try
        {
            Assert.True(run.ExitCode == 0, run.Output);
            Assert.Matches(@"after settle \+ upload:\s+state=Cached", run.Output);
            Assert.Matches(@"after Invoke-ForceStub:\s+state=Stubbed", run.Output);
            Assert.Contains("cache file blocks allocated: 0; size through the mount: 5 bytes", run.Output, StringComparison.Ordinal);
            Assert.Contains("Read back through the mount: 'hello'", run.Output, StringComparison.Ordinal);
            Assert.DoesNotContain("demo-secret-key", run.Output, StringComparison.Ordinal);
        }
        finally
        {
            Demo("stop");
        }
        Assert.DoesNotContain(Path.Combine(_temp.Path, "mnt"), File.ReadAllText("/proc/mounts"), StringComparison.Ordinal);
    }

    public void Dispose() => _temp.Dispose();
}
