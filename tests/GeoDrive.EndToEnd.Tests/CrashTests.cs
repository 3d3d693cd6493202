using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

[Collection(EndToEndCollection.Name)]
public sealed class CrashTests(S3ServerFixture s3) : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();

    public Task InitializeAsync() => _service.StartAsync();

    public Task DisposeAsync() => _service.DisposeAsync().AsTask();

    [Fact]
    public async Task After_kill_9_with_100_dirty_files_a_restart_uploads_them_all_and_stubs_none_before_its_upload_is_verified()
    {
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "1h"));
        var contents = Enumerable.Range(0, 100).Select(i =>
        {
            var bytes = new byte[10_000 + i];
            new Random(i).NextBytes(bytes);
            return bytes;
        }).ToArray();

        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
            Assert.Empty(ps.LastErrors);
            Directory.CreateDirectory(d.Mounted("batch"));
            for (var i = 0; i < contents.Length; i++)
            {
                await File.WriteAllBytesAsync(d.Mounted($"batch/file{i:000}.bin"), contents[i]);
            }
            var dirty = ps.Invoke("@(Get-CloudFile -Drive $name -Path 'batch/*' | Where-Object State -eq 'Dirty').Count", d.Variables()).Single();
            Assert.Equal(100, (int)dirty.BaseObject);
        }

        _service.Kill();
        // Come back with a policy that uploads at once and stubs a second after: every file is stubbed
        // soon after the restart, so the order of its upload and its stub can be checked.
        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s", accessWait: "1s"));
        await _service.StartAsync();

        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            await DriveScenario.EventuallyAsync(
                () => (int)ps.Invoke("@(Get-CloudFile -Drive $name -Path 'batch/*' | Where-Object State -eq 'Stubbed').Count", d.Variables()).Single().BaseObject == 100,
                "all 100 files uploaded and stubbed after the restart", seconds: 120);

            // The engine writes an Upload event only once the bucket's object is checked to hold the file's
            // bytes (size and checksum), and event ids ascend in the order things happened: for each file
            // its one Upload comes before its one Stub, or a file was stubbed on an unverified upload.
            var byFile = ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Upload, Stub -Path 'batch/*'", d.Variables())
                .GroupBy(e => (string)e.Properties["Path"].Value)
                .ToDictionary(g => g.Key, g => g.OrderBy(e => (long)e.Properties["Id"].Value).Select(e => (string)e.Properties["Kind"].Value).ToArray());
            for (var i = 0; i < contents.Length; i++)
            {
                var path = $"batch/file{i:000}.bin";
                Assert.True(byFile.TryGetValue(path, out var kinds), $"no Upload or Stub event for {path}");
                Assert.True(kinds is ["Upload", "Stub"], $"{path}: events in order {string.Join(", ", kinds)}, not Upload, Stub");
            }
        }
        for (var i = 0; i < contents.Length; i++)
        {
            Assert.Equal(contents[i], await d.ObjectBytesAsync($"batch/file{i:000}.bin"));
        }
        for (var i = 0; i < contents.Length; i++)
        {
            Assert.Equal(contents[i], await File.ReadAllBytesAsync(d.Mounted($"batch/file{i:000}.bin")));
        }
    }

    [Fact]
    public async Task After_kill_9_in_the_middle_of_uploads_a_restart_finishes_them_and_loses_nothing()
    {
        // Throttled to 500 KB/s, the 20 MB take 40 s to go up: the kill surely lands among the uploads.
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s").TrimEnd() + "\n  throttle: { upload: 500KB/s }\n");
        var contents = Enumerable.Range(0, 200).Select(i => DriveRig.RandomBytes(100_000 + i, i)).ToArray();

        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
            Assert.Empty(ps.LastErrors);
        }
        Directory.CreateDirectory(d.Mounted("busy"));
        for (var i = 0; i < contents.Length; i++)
        {
            await File.WriteAllBytesAsync(d.Mounted($"busy/file{i:000}.bin"), contents[i]);
        }
        // Settle 0: each file went into the upload queue at its close; the kill lands among those uploads.
        _service.Kill();
        using (var index = GeoDrive.State.LiteDbFileIndex.Open(Path.Combine(d.CachePath, ".geodrive", "index.db")))
        {
            var counts = index.CountByState();
            Assert.True(counts[GeoDrive.Core.Model.FileState.Dirty] + counts[GeoDrive.Core.Model.FileState.Uploading] > 0, "every upload had finished before the kill");
        }

        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s"));
        await _service.StartAsync();
        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            await DriveScenario.EventuallyAsync(
                () => (int)ps.Invoke("@(Get-CloudFile -Drive $name -Path 'busy/*' | Where-Object State -eq 'Cached').Count", d.Variables()).Single().BaseObject == 200,
                "all 200 files uploaded after the restart", seconds: 180);
        }
        for (var i = 0; i < contents.Length; i++)
        {
            Assert.Equal(contents[i], await d.ObjectBytesAsync($"busy/file{i:000}.bin"));
            Assert.Equal(contents[i], await File.ReadAllBytesAsync(d.Mounted($"busy/file{i:000}.bin")));
        }
    }
    [Fact]
    public async Task After_kill_9_in_the_middle_of_a_multipart_upload_a_restart_aborts_it_and_leaves_no_upload_open()
    {
        // Throttled to 1 MB/s, the 5 MiB parts of 16 MiB take seconds each: the kill lands among them.
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s").TrimEnd()
            + "\n  throttle: { upload: 1MB/s }\n  transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }\n");
        var bytes = DriveRig.RandomBytes(16 << 20, 9);
        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
            Assert.Empty(ps.LastErrors);
        }
        await File.WriteAllBytesAsync(d.Mounted("big.bin"), bytes);
        await DriveScenario.EventuallyAsync(() => OpenUploads(d).Count > 0, "a multipart upload open in the bucket", seconds: 30);

        _service.Kill();
        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "0s"));
        await _service.StartAsync();

        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            await DriveScenario.EventuallyAsync(
                // Nothing while the restarted service is still opening the drive.
                () => ps.Invoke("(Get-CloudFile -Drive $name -Path 'big.bin').State", d.Variables()).FirstOrDefault()?.BaseObject as string == "Cached",
                "big.bin uploaded after the restart", seconds: 120);
        }
        // The interrupted upload was journaled before its first part: the restart aborts it.
        await DriveScenario.EventuallyAsync(() => OpenUploads(d).Count == 0, "no multipart upload left open", seconds: 30);
        Assert.Equal(bytes, await d.ObjectBytesAsync("big.bin"));
    }

    [Fact]
    public async Task After_kill_9_right_after_a_folder_rename_a_restart_finishes_its_copies_and_every_file_keeps_its_bytes()
    {
        const int files = 300;
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var contents = Enumerable.Range(0, files).Select(i => DriveRig.RandomBytes(1000 + i, i)).ToArray();
        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            ps.Invoke(DriveScenario.NewDriveScript, d.Variables());
            Assert.Empty(ps.LastErrors);
            Directory.CreateDirectory(d.Mounted("project"));
            for (var i = 0; i < files; i++)
            {
                await File.WriteAllBytesAsync(d.Mounted($"project/f{i:0000}.bin"), contents[i]);
            }
            await DriveScenario.EventuallyAsync(
                () => (int)ps.Invoke("@(Get-CloudFile -Drive $name -Path 'project/*' | Where-Object State -eq 'Cached').Count", d.Variables()).Single().BaseObject == files,
                "all files uploaded", seconds: 120);
        }

        using var client = new GeoDrive.Api.GeoDriveClient(_service.SocketPath, TimeSpan.FromSeconds(10));
        Directory.Move(d.Mounted("project"), d.Mounted("done"));
        // The copies are journaled before the rename is answered; 300 copies and deletes take moto seconds, so the kill
        // lands with most of them still owed (checked, or this test would not test a restart that finishes them).
        var owed = (await client.GetDriveStatusAsync(d.Name)).BucketChangesOwed;
        _service.Kill();
        Assert.True(owed > 0, "the kill came after every copy was made: nothing was left for the restart to finish");
        await _service.StartAsync();

        // Waits on the service's own count of owed bucket changes, and lists the bucket only once none is left: a
        // listing of every key every 100 ms took most of moto's one core and slowed the copies it waits for (with
        // 1,000 files, on a slow day, the copies and deletes then took over 2 min). The bound catches a restart that
        // never settles.
        bool Settled()
        {
            try
            {
                return client.GetDriveStatusAsync(d.Name).GetAwaiter().GetResult().BucketChangesOwed == 0;
            }
            catch (Exception ex) when (ex is HttpRequestException or GeoDrive.Core.Errors.GeoDriveException or IOException)
            {
                return false; // the restarted service is still opening the drive
            }
        }
        // The folder's marker moves with it: "done/" beside the files, nothing left under "project/".
        await DriveScenario.EventuallyAsync(() => Settled() && Keys(d, "done/") is var done && done.Count == files + 1 && done.Contains("done/")
            && Keys(d, "project/").Count == 0,
            "every object copied to its new key, the folder's marker moved, and every old key gone", seconds: 300);
        for (var i = 0; i < files; i++)
        {
            Assert.Equal(contents[i], await d.ObjectBytesAsync($"done/f{i:0000}.bin"));
            Assert.Equal(contents[i], await File.ReadAllBytesAsync(d.Mounted($"done/f{i:0000}.bin")));
        }
    }

    [Fact]
    public async Task A_file_deleted_with_its_first_upload_in_flight_stays_deleted_when_that_upload_lands_after_kill_9_and_the_restart_FaultProxy_holds_the_PUT()
    {
        // Seed 1310022743 of the randomized crash run (CI, 30 Nov): a file deleted just before a kill -9 left its object in
        // the bucket for good. The request a killed run sent is the server's to finish: here the proxy holds the PUT until the
        // restarted service has paid the delete journaled before the kill (a stand-in for a busy server acting late).
        using var proxy = new FaultProxy(s3.Endpoint);
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var put = await FirstUploadHeldAsync(proxy, d, "late.bin", seed: 5);
        File.Delete(d.Mounted("late.bin"));

        _service.Kill();
        // Long enough that the held PUT is surely released within it on a slow day; the test waits it out.
        _service.Environment[ServiceProcess.LateWriteGraceVariable] = "10s";
        var deleted = proxy.WhenAnswered(head => head.StartsWith("DELETE ", StringComparison.Ordinal) && head.Contains("late.bin", StringComparison.Ordinal));
        await _service.StartAsync();
        await deleted.WaitAsync(TimeSpan.FromSeconds(60));
        // The killed run's upload lands now, on a key the restarted service has just deleted.
        Assert.StartsWith("HTTP/1.1 200", await put.ReleaseAsync().WaitAsync(TimeSpan.FromSeconds(60)));

        using var client = new GeoDrive.Api.GeoDriveClient(_service.SocketPath, TimeSpan.FromSeconds(10));
        await DriveScenario.EventuallyAsync(() => client.GetDriveStatusAsync(d.Name).GetAwaiter().GetResult().BucketChangesOwed == 0,
            "nothing owed to the bucket", seconds: 60);
        // What the user sees first: the deleted file back in its folder (a stub of the late object, synced down).
        Assert.DoesNotContain("late.bin", Directory.GetFileSystemEntries(d.MountPath).Select(Path.GetFileName));
        Assert.Null(await d.ObjectBytesAsync("late.bin"));
        using var events = new PowerShellSession(_service.SocketPath);
        var said = events.Invoke("Get-CloudDriveEvent -Drive $name -Kind Delete -Path 'late.bin' | ForEach-Object Message", d.Variables()).Select(m => (string)m.BaseObject);
        Assert.Contains(said, m => m.Contains("reached the bucket after its file was deleted", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_file_deleted_right_after_the_restart_stays_deleted_when_the_killed_runs_first_upload_lands_after_that_delete_FaultProxy_holds_the_PUT()
    {
        // As the test above, but the file is deleted by the user after the restart (before the restarted service uploaded it):
        // that delete is the restarted run's own, and the killed run's PUT, stored after it, finds the key free.
        using var proxy = new FaultProxy(s3.Endpoint);
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s"));
        var put = await FirstUploadHeldAsync(proxy, d, "fresh.bin", seed: 6);

        _service.Kill();
        // The restarted service uploads nothing by itself before the user's delete.
        await File.WriteAllTextAsync(d.PolicyPath, DriveScenario.Policy(settle: "1h"));
        _service.Environment[ServiceProcess.LateWriteGraceVariable] = "10s";
        var deleted = proxy.WhenAnswered(head => head.StartsWith("DELETE ", StringComparison.Ordinal) && head.Contains("fresh.bin", StringComparison.Ordinal));
        await _service.StartAsync();
        using var client = new GeoDrive.Api.GeoDriveClient(_service.SocketPath, TimeSpan.FromSeconds(10));
        await DriveScenario.EventuallyAsync(() => client.GetDriveAsync(d.Name).GetAwaiter().GetResult().Mounted, "the drive mounted again");
        File.Delete(d.Mounted("fresh.bin"));
        await deleted.WaitAsync(TimeSpan.FromSeconds(60));
        Assert.StartsWith("HTTP/1.1 200", await put.ReleaseAsync().WaitAsync(TimeSpan.FromSeconds(60)));

        await DriveScenario.EventuallyAsync(() => client.GetDriveStatusAsync(d.Name).GetAwaiter().GetResult().BucketChangesOwed == 0,
            "nothing owed to the bucket", seconds: 60);
        Assert.Null(await d.ObjectBytesAsync("fresh.bin"));
        Assert.DoesNotContain("fresh.bin", Directory.GetFileSystemEntries(d.MountPath).Select(Path.GetFileName));
    }

    [Fact]
    public async Task A_renamed_files_copy_sent_before_kill_9_that_lands_over_its_newer_upload_is_undone_once_the_late_write_grace_passed_FaultProxy_holds_the_copy()
    {
        // A rename's server-side copy carries no condition on what it replaces (Ceph 16 takes none), and a copy the killed
        // run sent is the server's to finish. Here the proxy holds it until the restarted service has made the copy again,
        // the user has written the file anew and that upload is in the bucket; the old key's delete is refused meanwhile,
        // so the late copy still finds its source (a stand-in for a busy server acting late).
        using var proxy = new FaultProxy(s3.Endpoint);
        using var d = new DriveScenario(s3, DriveScenario.Policy(settle: "0s").Replace("settle: 0s", "settle: 0s, updateWait: 0s", StringComparison.Ordinal));
        using var ps = new PowerShellSession(_service.SocketPath);
        ps.Invoke(DriveScenario.NewDriveScript, d.Variables(endpoint: proxy.Endpoint));
        Assert.Empty(ps.LastErrors);
        var first = DriveRig.RandomBytes(20_000, 7);
        await File.WriteAllBytesAsync(d.Mounted("a.bin"), first);
        await DriveScenario.EventuallyAsync(() => StateOf(ps, d, "a.bin") == "Cached", "a.bin uploaded");

        var copy = proxy.HoldNext(head => head.StartsWith("PUT ", StringComparison.Ordinal) && head.Contains("b.bin", StringComparison.Ordinal)
            && head.Contains("x-amz-copy-source", StringComparison.OrdinalIgnoreCase));
        File.Move(d.Mounted("a.bin"), d.Mounted("b.bin"));
        await copy.Arrived.WaitAsync(TimeSpan.FromSeconds(60));

        _service.Kill();
        // Long enough for what follows to happen within it on a slow day: the restarted service looks at the key once it passed.
        _service.Environment[ServiceProcess.LateWriteGraceVariable] = "30s";
        using (proxy.RefuseWhile(head => head.StartsWith("DELETE ", StringComparison.Ordinal) && head.Contains("a.bin", StringComparison.Ordinal)))
        {
            await _service.StartAsync();
            using var after = new PowerShellSession(_service.SocketPath);
            await DriveScenario.EventuallyAsync(() => d.ObjectBytesAsync("b.bin").GetAwaiter().GetResult() is { } copied && copied.AsSpan().SequenceEqual(first),
                "the restarted service copied a.bin to b.bin");
            var newer = DriveRig.RandomBytes(30_000, 8);
            await File.WriteAllBytesAsync(d.Mounted("b.bin"), newer);
            // (The close may return before the service heard of it: the state alone could still be the copy's Cached.)
            await DriveScenario.EventuallyAsync(() => StateOf(after, d, "b.bin") == "Cached"
                && d.ObjectBytesAsync("b.bin").GetAwaiter().GetResult() is { } there && there.AsSpan().SequenceEqual(newer), "the new bytes of b.bin uploaded");

            // The killed run's copy lands now: the old bytes over the newer upload, with this site's id.
            Assert.StartsWith("HTTP/1.1 200", await copy.ReleaseAsync().WaitAsync(TimeSpan.FromSeconds(60)));
            Assert.Equal(first, await d.ObjectBytesAsync("b.bin"));
            Assert.True(proxy.Refused > 0, "the old key's delete was never tried while the copy was held");

            // Once the grace has passed, before anyone opens the file: the newer bytes in the bucket again, and in the file.
            await DriveScenario.EventuallyAsync(() => d.ObjectBytesAsync("b.bin").GetAwaiter().GetResult() is { } there && there.AsSpan().SequenceEqual(newer),
                "the newer bytes in the bucket again");
            Assert.Equal(newer, await File.ReadAllBytesAsync(d.Mounted("b.bin")));
            var said = after.Invoke("Get-CloudDriveEvent -Drive $name -Path 'b.bin' | ForEach-Object Message", d.Variables()).Select(m => (string)m.BaseObject);
            Assert.Contains(said, m => m.Contains("reached the bucket after", StringComparison.Ordinal));
        }
    }

    private static string? StateOf(PowerShellSession ps, DriveScenario d, string path) =>
        ps.Invoke("Get-CloudFile -Drive $name -Path $path | ForEach-Object State", new Dictionary<string, object?>(d.Variables()) { ["path"] = path })
            .Select(s => s.BaseObject.ToString()).SingleOrDefault();

    /// <summary>A drive behind <paramref name="proxy"/>; <paramref name="name"/> written through its mount and its first upload held by the proxy.</summary>
    private async Task<FaultProxy.HeldRequest> FirstUploadHeldAsync(FaultProxy proxy, DriveScenario d, string name, int seed)
    {
        using (var ps = new PowerShellSession(_service.SocketPath))
        {
            ps.Invoke(DriveScenario.NewDriveScript, d.Variables(endpoint: proxy.Endpoint));
            Assert.Empty(ps.LastErrors);
        }
        var put = proxy.HoldNext(head => head.StartsWith("PUT ", StringComparison.Ordinal) && head.Contains(name, StringComparison.Ordinal));
        await File.WriteAllBytesAsync(d.Mounted(name), DriveRig.RandomBytes(20_000, seed));
        await put.Arrived.WaitAsync(TimeSpan.FromSeconds(60));
        return put;
    }

    private static List<string> Keys(DriveScenario d, string prefix)
    {
        var keys = new List<string>();
        var request = new Amazon.S3.Model.ListObjectsV2Request { BucketName = d.Bucket, Prefix = prefix };
        Amazon.S3.Model.ListObjectsV2Response response;
        do
        {
            response = d.S3.Client.ListObjectsV2Async(request).GetAwaiter().GetResult();
            keys.AddRange((response.S3Objects ?? []).Select(o => o.Key));
            request.ContinuationToken = response.NextContinuationToken;
        }
        while (response.IsTruncated == true);
        return keys;
    }

    private static List<string> OpenUploads(DriveScenario d) =>
        d.S3.Client.ListMultipartUploadsAsync(d.Bucket).GetAwaiter().GetResult().MultipartUploads?.Select(u => u.UploadId).ToList() ?? [];
}
