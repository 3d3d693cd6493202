using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using GeoDrive.Api;
using GeoDrive.TestSupport;

namespace GeoDrive.Packaging.Tests;

/// <summary>
/// The service tolerates the unit's privilege limits: run with exactly the unit's CapabilityBoundingSet and
/// NoNewPrivileges (setpriv, as systemd would apply them; systemd itself is not PID 1 here), a FUSE drive on a
/// real S3 server serves a file written by another user, keeps the owner, set-group-id folder and ACL given to it
/// through the mount, uploads, stubs and recalls it, and is dismounted on SIGTERM.
/// </summary>
public sealed partial class SandboxTests(S3ServerFixture s3) : IClassFixture<S3ServerFixture>, IDisposable
{
    private readonly TempDirectory _temp = new("sandbox");
    private Process? _service;

    [Fact]
    public async Task Under_the_units_capabilities_and_NoNewPrivileges_a_drive_serves_other_users_files_through_upload_stub_and_recall()
    {
        var unit = File.ReadAllText(Path.Combine(RepositoryRoot.Path, "packaging/linux/geodrive.service"));
        var capabilities = BoundingSet().Match(unit).Groups[1].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries)
            .Select(c => "+" + c["CAP_".Length..].ToLowerInvariant()).ToList();
        Assert.True(unit.Contains("NoNewPrivileges=yes\n", StringComparison.Ordinal));
        var socket = _temp.Combine("geodrive.sock");
        var mount = _temp.CreateSubdirectory("mnt");
        File.SetUnixFileMode(mount, (UnixFileMode)0b111_111_111);   // the drive's root shows the mount folder's mode: everyone may write
        var log = new StringBuilder();
        var service = _service = Start(log, "setpriv", ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all," + string.Join(',', capabilities), "--",
            ServiceExecutable, "--socket", socket, "--home", _temp.CreateSubdirectory("home"), "--tick", "200ms"]);
        // 30 s, as the end-to-end tests give: making a drive probes the bucket and mounts, and on a loaded CI machine took over 5 s.
        using var client = new GeoDriveClient(socket, TimeSpan.FromSeconds(30));
        var info = await WaitForServiceAsync(client, service, log);
        // What the kernel holds for it: the unit's six capabilities and no_new_privs.
        Assert.Equal(capabilities.Count, ReadCapabilities(info.ProcessId));
        Assert.Contains("NoNewPrivs:\t1", File.ReadAllText($"/proc/{info.ProcessId}/status"), StringComparison.Ordinal);

        // Through the control API (the release tests import the packaged module into this process).
        var policy = _temp.Combine("policy.yaml");
        File.WriteAllText(policy, "apiVersion: geodrive/v1\nkind: CloudDrivePolicy\nmetadata: { name: sandbox }\nspec:\n  upload: { settle: 1s }\n");
        await client.NewDriveAsync(new NewDriveRequest
        {
            Name = "sandbox", CachePath = _temp.Combine("cache"), MountPath = mount, Endpoint = s3.Endpoint, Bucket = s3.CreateBucket(),
            AccessKey = s3.AccessKey, SecretKey = s3.SecretKey, PolicyPaths = [policy],
        });

        var file = Path.Combine(mount, "team", "q3.txt");
        Assert.Equal(0, Unprivileged.Run("sh", "-c", $"mkdir '{mount}/team' && echo q3-figures > '{file}'").ExitCode);
        Command.Output("chmod", "g+s", Path.Combine(mount, "team"));
        Command.Output("chown", "daemon:nogroup", file);
        Command.Output("setfacl", "-m", "u:nobody:r--", file);
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while ((await client.GetFilesAsync("sandbox", "team/q3.txt")).Single().State != "Cached")
        {
            Assert.True(DateTime.UtcNow < deadline, "not Cached within 60 s");
            await Task.Delay(200);
        }
        await client.StubAsync("sandbox", new FileActionRequest { Paths = ["team/q3.txt"], Literal = true });
        Assert.Equal("Stubbed", (await client.GetFilesAsync("sandbox", "team/q3.txt")).Single().State);

        Assert.Equal((0, "q3-figures\n"), Unprivileged.Run("cat", file));
        Assert.Equal("daemon:nogroup 644\nnobody:nogroup 2755\n", Command.Output("stat", "-c", "%U:%G %a", file, Path.Combine(mount, "team")));
        Assert.Contains("user:nobody:r--", Command.Output("getfacl", "-c", file), StringComparison.Ordinal);

        using (var term = Process.Start("kill", ["-TERM", info.ProcessId.ToString(CultureInfo.InvariantCulture)]))
        {
            await term.WaitForExitAsync();
        }
        await service.WaitForExitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(45)).Token);
        Assert.DoesNotContain($" {mount} ", File.ReadAllText("/proc/mounts"), StringComparison.Ordinal);
        lock (log)
        {
            Assert.DoesNotContain("Operation not permitted", log.ToString(), StringComparison.Ordinal);
        }
    }

    /// <summary>How many capabilities the process holds (its effective set, as /proc shows it).</summary>
    private static int ReadCapabilities(int pid)
    {
        var line = File.ReadLines($"/proc/{pid}/status").Single(l => l.StartsWith("CapEff:", StringComparison.Ordinal));
        var mask = ulong.Parse(line["CapEff:".Length..].Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        return System.Numerics.BitOperations.PopCount(mask);
    }

    private static Process Start(StringBuilder log, string file, string[] arguments)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            psi.ArgumentList.Add(argument);
        }
        var process = Process.Start(psi)!;
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.AppendLine(e.Data); } } };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (log) { log.AppendLine(e.Data); } } };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static async Task<ServiceInfo> WaitForServiceAsync(GeoDriveClient client, Process service, StringBuilder log)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            if (service.HasExited)
            {
                lock (log)
                {
                    Assert.Fail("the service exited before it answered:\n" + log);
                }
            }
            try
            {
                return await client.GetServiceAsync();
            }
            catch (Exception ex) when (ex is GeoDrive.Core.Errors.GeoDriveException or TaskCanceledException && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }

    private static string ServiceExecutable
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains("/Release/", StringComparison.Ordinal) ? "Release" : "Debug";
            return Path.Combine(RepositoryRoot.Path, "engine/src/GeoDrive.Service/bin", configuration, "net10.0", "GeoDrive.Service");
        }
    }

    [GeneratedRegex(@"^CapabilityBoundingSet=(.+)$", RegexOptions.Multiline)]
    private static partial Regex BoundingSet();

    public void Dispose()
    {
        // A failed test must not leave its service or mount behind.
        if (_service is { HasExited: false })
        {
            _service.Kill(entireProcessTree: true);
            _service.WaitForExit();
        }
        _service?.Dispose();
        Command.Run("umount", "-l", _temp.Combine("mnt"));
        _temp.Dispose();
    }
}
