using System.IO.Hashing;
using System.Security.Cryptography;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Layout;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Mount.Fuse.Tests;

/// <summary>
/// Checksums taken as files are written through the mount never label an object with bytes it does not hold: a seeded
/// random sequence of writes through a real mount (from empty and not, at the end and not, two handles at once, cuts,
/// renames onto a name) is uploaded now and then, and every object must hold the model's bytes under their own SHA-256,
/// its entry their XXH3-128, and a stub of it must read back the same (docs/decisions/0032-hashed-as-written.md).
/// GEODRIVE_MOUNT_SEED replays a run.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class WrittenChecksumPropertyTests(S3ServerFixture s3, ITestOutputHelper output) : MountedDriveTests, IClassFixture<S3ServerFixture>
{
    private static readonly string[] Names = ["a.bin", "b.bin", "Sub/c.bin"];

    [Fact]
    public async Task Objects_uploaded_after_random_writes_through_the_mount_hold_the_bytes_their_checksums_name()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("GEODRIVE_MOUNT_SEED"), out var s) ? s : Random.Shared.Next();
        output.WriteLine($"seed {seed} (replay: GEODRIVE_MOUNT_SEED={seed})");
        var random = new Random(seed);
        // Above 5 MiB a file goes in parts, where nothing but the checksums taken as it was written names its bytes.
        var rig = Cleanup.Push(new DriveRig(s3, """
            apiVersion: geodrive/v1
            kind: CloudDrivePolicy
            metadata: { name: written-checksum-tests }
            spec:
              stubbing: { enabled: true, accessWait: 1h }
              upload: { settle: 1h }
              transfer: { multipart: { threshold: 5MiB, partSize: 5MiB } }
              excludes: [ "**/*.part" ]
            """, multipartThreshold: 5L << 20));
        var mounted = Mount(rig.Engine);
        Directory.CreateDirectory(Path.Combine(mounted.Root, "Sub"));
        var model = new Dictionary<string, byte[]>(StringComparer.Ordinal);

        for (var step = 0; step < 40; step++)
        {
            var name = Names[random.Next(Names.Length)];
            var full = Path.Combine(mounted.Root, name);
            var what = model.ContainsKey(name) ? random.Next(6) : 0;
            output.WriteLine($"step {step}: {name}, {what}");
            model[name] = what switch
            {
                0 => WriteFromEmpty(full, random),
                1 => WriteAt(full, model[name], random.Next(model[name].Length + 1), Chunk(random, 1 + random.Next(200_000))),
                2 => WriteAt(full, model[name], model[name].Length, Chunk(random, 1 + random.Next(200_000))),
                3 => WriteFromEmptyAndCut(full, random),
                4 => WriteWithTwoHandles(full, random),
                _ => WriteAsidAndRenameOnto(full, random),
            };
            await mounted.WaitForClosesAsync();
            if (random.Next(2) == 0)
            {
                await UploadAndCheckAsync(rig, name, model[name]);
            }
        }

        foreach (var (name, bytes) in model)
        {
            await UploadAndCheckAsync(rig, name, bytes);
            await rig.Engine.StubAsync(name);
            Assert.Equal(FileState.Stubbed, rig.StateOf(name));
            // The recall checks what arrives against the entry's XXH3-128 and SHA-256.
            Assert.Equal(bytes, await File.ReadAllBytesAsync(Path.Combine(mounted.Root, name)));
        }
    }

    private async Task UploadAndCheckAsync(DriveRig rig, string name, byte[] bytes)
    {
        var entry = await rig.Engine.UploadAsync(name);
        output.WriteLine($"  uploaded {name}: {bytes.Length:N0} bytes");
        Assert.Equal(FileState.Cached, entry.State);
        Assert.Equal(bytes, await rig.ObjectBytesAsync(name));
        var head = await rig.Store.HeadAsync(name);
        Assert.True(ObjectLayout.Holds(head!, bytes.Length, Convert.ToHexStringLower(SHA256.HashData(bytes)), null), $"{name}: the object's SHA-256 is not of its bytes");
        Assert.Equal(Convert.ToHexStringLower(XxHash128.Hash(bytes)), entry.Xxh128);
    }

    /// <summary>Mostly small files, now and then one that goes in parts.</summary>
    private static int RandomSize(Random random) => random.Next(3) == 0 ? (5 << 20) + random.Next(4 << 20) : random.Next(300_000);

    private static byte[] Chunk(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>Made or truncated, then written from start to end in pieces of any size.</summary>
    private static byte[] WriteFromEmpty(string full, Random random)
    {
        var content = Chunk(random, RandomSize(random));
        using var handle = File.OpenHandle(full, FileMode.Create, FileAccess.Write);
        for (var at = 0; at < content.Length;)
        {
            var piece = Math.Min(content.Length - at, 1 + random.Next(300_000));
            RandomAccess.Write(handle, content.AsSpan(at, piece), at);
            at += piece;
        }
        return content;
    }

    private static byte[] WriteAt(string full, byte[] before, int offset, byte[] chunk)
    {
        using (var handle = File.OpenHandle(full, FileMode.Open, FileAccess.Write))
        {
            RandomAccess.Write(handle, chunk, offset);
        }
        var after = new byte[Math.Max(before.Length, offset + chunk.Length)];
        before.CopyTo(after, 0);
        chunk.CopyTo(after, offset);
        return after;
    }

    /// <summary>Written from empty, then cut shorter or made longer (zeros) through the same handle.</summary>
    private static byte[] WriteFromEmptyAndCut(string full, Random random)
    {
        var content = Chunk(random, RandomSize(random));
        var length = random.Next(content.Length + 100_000);
        using (var handle = File.OpenHandle(full, FileMode.Create, FileAccess.Write))
        {
            RandomAccess.Write(handle, content, 0);
            RandomAccess.SetLength(handle, length);
        }
        var after = new byte[length];
        content.AsSpan(0, Math.Min(length, content.Length)).CopyTo(after);
        return after;
    }

    /// <summary>
    /// One handle makes the file, a second opens it: both write at the end in turn, and now and then one writes over bytes
    /// already there without making the file longer, which only the checksums can tell.
    /// </summary>
    private static byte[] WriteWithTwoHandles(string full, Random random)
    {
        using var first = File.OpenHandle(full, FileMode.Create, FileAccess.Write);
        using var second = File.OpenHandle(full, FileMode.Open, FileAccess.Write);
        var content = new List<byte>();
        var largest = random.Next(3) == 0 ? 100_000 : 4 << 20;
        for (var turn = 0; turn < 6; turn++)
        {
            var chunk = Chunk(random, 1 + random.Next(largest));
            var offset = content.Count;
            if (turn > 0 && random.Next(2) == 0)
            {
                chunk = chunk[..Math.Min(chunk.Length, content.Count)];
                offset = random.Next(content.Count - chunk.Length + 1);
            }
            RandomAccess.Write(turn % 2 == 0 ? first : second, chunk, offset);
            for (var i = 0; i < chunk.Length; i++)
            {
                if (offset + i < content.Count)
                {
                    content[offset + i] = chunk[i];
                }
                else
                {
                    content.Add(chunk[i]);
                }
            }
        }
        return [.. content];
    }

    /// <summary>Written under a name kept local, now and then given a time as rsync does, then renamed over the file (how downloads and editors save).</summary>
    private static byte[] WriteAsidAndRenameOnto(string full, Random random)
    {
        var aside = full + ".part";
        var content = WriteFromEmpty(aside, random);
        if (random.Next(2) == 0)
        {
            File.SetLastWriteTimeUtc(aside, new DateTime(2024, 5, 1, 8, 0, 0, DateTimeKind.Utc).AddSeconds(random.Next(1000)));
        }
        File.Move(aside, full, overwrite: true);
        return content;
    }
}
