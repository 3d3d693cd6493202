using GeoDrive.Core.Model;
using GeoDrive.TestSupport;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>spec.stubbing, spec.cacheThresholds, spec.excludes and spec.metadata acting on files written through a real FUSE mount.</summary>
public sealed class StubbingPolicyTests(S3ServerFixture s3) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private const int MiB = 1024 * 1024;

    // Undone last-in first-out: the mount before its engine, the engine before the volume under its cache.
    private async Task<(DriveRig Rig, FuseMountedDrive Mounted)> MountAsync(string spec, string? cachePath = null)
    {
        var rig = new DriveRig(s3, $$"""
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: stubbing-tests }
            spec:
            {{spec}}
            """, cachePath);
        Cleanup.Push(rig);
        var mounted = Mount(rig.Engine);
        await Task.CompletedTask;
        return (rig, mounted);
    }

    private static async Task<byte[]> WriteAsync(FuseMountedDrive mounted, string path, int size, int seed)
    {
        var bytes = DriveRig.RandomBytes(size, seed);
        var full = Path.Combine(mounted.Root, path);
        Directory.CreateDirectory(Path.GetDirectoryName(full)!);
        await File.WriteAllBytesAsync(full, bytes);
        await mounted.WaitForClosesAsync();
        return bytes;
    }

    [Fact]
    public async Task A_pinned_path_is_never_stubbed_even_long_past_its_access_wait()
    {
        var (rig, mounted) = await MountAsync("""
              stubbing: { enabled: true, accessWait: 1d, rules: [ { paths: ["Active/**"], pin: true } ] }
              upload: { settle: 0s }
            """);
        await WriteAsync(mounted, "Active/plan.docx", 100_000, 1);
        await WriteAsync(mounted, "Archive/old.docx", 100_000, 2);
        await rig.Engine.TickAsync();

        rig.Clock.Advance(TimeSpan.FromDays(400));
        await rig.Engine.TickAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("Active/plan.docx"));
        Assert.Equal(FileState.Stubbed, rig.StateOf("Archive/old.docx"));
    }

    [Fact]
    public async Task Each_of_the_five_exclude_kinds_keeps_its_files_out_of_the_bucket()
    {
        var (rig, mounted) = await MountAsync("""
              upload: { settle: 0s }
              excludes:
                - "Thumbs.db"                     # a file, by name, in any folder
                - "*.tmp"                         # a file pattern
                - "**/Scratch/"                   # a folder, by name, in any folder, with everything under it
                - "cache-*/"                      # a folder pattern
                - "Projects/private/salaries.xlsx" # a path from the drive's root
            """);
        string[] excluded = ["Photos/Thumbs.db", "build/out.tmp", "Scratch/notes.txt", "Projects/Scratch/deep/x.bin", "cache-2026/blob.bin", "Projects/private/salaries.xlsx"];
        string[] uploaded = ["Photos/holiday.jpg", "Projects/private/budget.xlsx", "Scratchpad.txt", "cache.txt", "Other/salaries.xlsx"];
        foreach (var path in excluded.Concat(uploaded))
        {
            await WriteAsync(mounted, path, 1_000, path.Length);
        }

        await rig.Engine.TickAsync();

        Assert.Equal(excluded.Select(p => (p, FileState.Excluded)), excluded.Select(p => (p, rig.StateOf(p))));
        Assert.Equal(uploaded.Select(p => (p, FileState.Cached)), uploaded.Select(p => (p, rig.StateOf(p))));
        foreach (var path in excluded)
        {
            Assert.Null(await rig.Store.HeadAsync(path));
            Assert.True(File.Exists(Path.Combine(mounted.Root, path)), $"{path} stays local");
        }
        foreach (var path in uploaded)
        {
            Assert.NotNull(await rig.Store.HeadAsync(path));
        }
    }

    [Fact]
    public async Task A_PDF_s_object_carries_its_tags_with_variables_filled_in_and_other_files_do_not()
    {
        var (rig, mounted) = await MountAsync("""
              upload: { settle: 0s }
              metadata:
                - { paths: ["**/*.pdf"], tags: { department: finance, retention: 7y, source: "${folder}/${name}", kind: "${extension}" } }
            """);
        await WriteAsync(mounted, "Reports/Q3 results.PDF", 5_000, 1);
        await WriteAsync(mounted, "Reports/notes.txt", 5_000, 2);

        await rig.Engine.TickAsync();

        var pdf = (await rig.Store.HeadAsync("Reports/Q3 results.PDF"))!.Metadata;
        Assert.Equal(("finance", "7y", "Reports/Q3 results.PDF", "pdf"), (pdf["department"], pdf["retention"], pdf["source"], pdf["kind"]));
        Assert.False((await rig.Store.HeadAsync("Reports/notes.txt"))!.Metadata.ContainsKey("department"));
    }

    private static async Task<Dictionary<string, string>> ObjectTagsAsync(DriveRig rig, string key) =>
        (await rig.S3.Client.GetObjectTaggingAsync(new Amazon.S3.Model.GetObjectTaggingRequest { BucketName = rig.Bucket, Key = key }))
            .Tagging?.ToDictionary(t => t.Key, t => t.Value) ?? [];

    [Fact]
    public async Task With_objectTags_a_rule_s_tags_are_also_S3_object_tags_that_follow_a_rename_and_other_rules_stay_metadata_only()
    {
        var (rig, mounted) = await MountAsync("""
              upload: { settle: 0s }
              metadata:
                - { paths: ["Legal/**"], tags: { retention: 7y, source: "${name}" }, objectTags: true }
                - { paths: ["**"], tags: { site: paris } }
            """);
        await WriteAsync(mounted, "Legal/contract #4.pdf", 5_000, 1);
        await WriteAsync(mounted, "Other/notes.txt", 5_000, 2);
        await rig.Engine.TickAsync();

        Assert.Equal(new Dictionary<string, string> { ["retention"] = "7y", ["source"] = "contract _4.pdf" }, await ObjectTagsAsync(rig, "Legal/contract #4.pdf"));
        Assert.Empty(await ObjectTagsAsync(rig, "Other/notes.txt"));
        var legal = (await rig.Store.HeadAsync("Legal/contract #4.pdf"))!.Metadata;
        Assert.Equal(("7y", "paris"), (legal["retention"], legal["site"]));
        Assert.DoesNotContain(legal.Keys, k => k.Contains("tagging", StringComparison.Ordinal));

        // Renamed: copied in the bucket with the new name's tags.
        File.Move(Path.Combine(mounted.Root, "Legal/contract #4.pdf"), Path.Combine(mounted.Root, "Legal/signed.pdf"));
        await rig.Engine.TickAsync();
        await rig.Engine.TickAsync();
        Assert.Equal(new Dictionary<string, string> { ["retention"] = "7y", ["source"] = "signed.pdf" }, await ObjectTagsAsync(rig, "Legal/signed.pdf"));
    }

    [Fact]
    public async Task Mirror_mode_never_stubs_by_access_wait_or_by_cache_threshold()
    {
        var (rig, mounted) = await MountAsync("""
              stubbing: { enabled: false, accessWait: 1d }
              cacheThresholds: { stubAbove: 1%, stubUntil: 0% }
              upload: { settle: 0s }
            """);
        var bytes = await WriteAsync(mounted, "mirror.bin", 200_000, 3);
        await rig.Engine.TickAsync();

        rig.Clock.Advance(TimeSpan.FromDays(400));
        await rig.Engine.TickAsync();

        Assert.Equal(FileState.Cached, rig.StateOf("mirror.bin"));
        Assert.Equal(bytes, await rig.ObjectBytesAsync("mirror.bin"));
        Assert.NotEqual(0, rig.AllocatedBlocks("mirror.bin"));
    }

    [Fact]
    public async Task Above_stubAbove_the_least_recently_accessed_files_are_stubbed_until_usage_is_under_stubUntil()
    {
        var volume = new LoopVolume(64);
        Cleanup.Push(volume);
        var (rig, mounted) = await MountAsync("""
              stubbing: { enabled: true, accessWait: 30d }
              cacheThresholds: { stubAbove: 60%, stubUntil: 40% }
              upload: { settle: 0s }
            """, Path.Combine(volume.MountPath, "cache"));
        var contents = new List<byte[]>();
        for (var i = 0; i < 10; i++)
        {
            contents.Add(await WriteAsync(mounted, $"scans/scan{i}.tif", 4 * MiB, 10 + i));
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
        }
        // The oldest written is read through the mount after the others: it is now the most recently accessed.
        Assert.Equal(contents[0], await File.ReadAllBytesAsync(Path.Combine(mounted.Root, "scans/scan0.tif")));
        await mounted.WaitForClosesAsync();
        int[] leastRecentlyAccessedFirst = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0];
        var allocated = Enumerable.Range(0, 10).Select(i => rig.AllocatedBlocks($"scans/scan{i}.tif") * 512).ToList();
        var stubUntil = (long)Math.Round(volume.TotalBytes * 0.40);
        var usedBefore = volume.UsedBytes;
        Assert.True(volume.UsedPercent > 60, $"the test's volume should be over 60% used, is {volume.UsedPercent:0.#}%");
        // As few files as bring usage down to stubUntil, taken in that order.
        var expectedStubbed = 0;
        for (var freed = 0L; usedBefore - freed > stubUntil; expectedStubbed++)
        {
            freed += allocated[leastRecentlyAccessedFirst[expectedStubbed]];
        }

        await rig.Engine.TickAsync();

        var stubbed = leastRecentlyAccessedFirst.Where(i => rig.StateOf($"scans/scan{i}.tif") == FileState.Stubbed).ToList();
        Assert.Equal(leastRecentlyAccessedFirst.Take(expectedStubbed), stubbed);
        Assert.Equal(FileState.Cached, rig.StateOf("scans/scan0.tif"));
        Assert.Equal(FileState.Stubbed, rig.StateOf("scans/scan1.tif"));
        // Stubbing stopped as soon as usage was under stubUntil: without the last file stubbed it would not be.
        var usedAfter = volume.UsedBytes;
        Assert.True(usedAfter <= stubUntil, $"usage should be down to 40% ({stubUntil} bytes), is {usedAfter}");
        Assert.True(usedAfter + allocated[stubbed[^1]] > stubUntil, $"{usedAfter} bytes used: one file fewer would have been enough");
        Assert.Equal(contents[1], await File.ReadAllBytesAsync(Path.Combine(mounted.Root, "scans/scan1.tif")));
    }

    [Fact]
    public async Task Under_stubAbove_but_with_less_than_reserveFree_free_the_least_recently_accessed_files_are_stubbed_until_it_is_free()
    {
        var volume = new LoopVolume(64);
        Cleanup.Push(volume);
        var (rig, mounted) = await MountAsync("""
              stubbing: { enabled: true, accessWait: 30d }
              cacheThresholds: { stubAbove: 95%, stubUntil: 90%, reserveFree: 24MiB }
              upload: { settle: 0s }
            """, Path.Combine(volume.MountPath, "cache"));
        var contents = new List<byte[]>();
        for (var i = 0; i < 10; i++)
        {
            contents.Add(await WriteAsync(mounted, $"media/clip{i}.mov", 4 * MiB, 40 + i));
            rig.Clock.Advance(TimeSpan.FromMinutes(1));
        }
        await rig.Engine.WhenUploadsIdleAsync();
        long Free() => new DriveInfo(volume.MountPath).AvailableFreeSpace;
        var allocated = Enumerable.Range(0, 10).Select(i => rig.AllocatedBlocks($"media/clip{i}.mov") * 512).ToList();
        var freeBefore = Free();
        Assert.True(volume.UsedPercent < 95, $"only reserveFree should act: the volume is {volume.UsedPercent:0.#}% used");
        Assert.True(freeBefore < 24L * MiB, $"the test's volume should have less than 24 MiB free, has {freeBefore}");
        // As few files as free 24 MiB, oldest access first.
        var expectedStubbed = 0;
        for (var freed = 0L; freeBefore + freed < 24L * MiB; expectedStubbed++)
        {
            freed += allocated[expectedStubbed];
        }

        await rig.Engine.TickAsync();

        var stubbed = Enumerable.Range(0, 10).Where(i => rig.StateOf($"media/clip{i}.mov") == FileState.Stubbed).ToList();
        Assert.Equal(Enumerable.Range(0, expectedStubbed), stubbed);
        Assert.True(Free() >= 24L * MiB, $"{Free()} bytes free after stubbing, reserveFree is {24L * MiB}");
        Assert.All(stubbed, i => Assert.Equal(0, rig.AllocatedBlocks($"media/clip{i}.mov")));
        Assert.Equal(contents[0], await File.ReadAllBytesAsync(Path.Combine(mounted.Root, "media/clip0.mov")));
        Assert.Equal(contents[9], await File.ReadAllBytesAsync(Path.Combine(mounted.Root, "media/clip9.mov")));
    }
}
