using System.Globalization;
using System.Security.Cryptography;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Engine.Drives;
using GeoDrive.TestSupport;
using Xunit.Abstractions;

namespace GeoDrive.Engine.Tests;

/// <summary>
/// Two sites on one bucket (two engines, each with its own cache, index and site id) doing a seeded random sequence of
/// writes, renames, deletes, stubs, reads, bucket syncs and restarts on a handful of names. The model is what each site knew:
/// a version is gone legitimately only when a site replaced, deleted or renamed over it while its file there held or stood
/// for it (ADR 0008: a clean file follows the bucket; both changed, both are kept). Once both sites have caught up, every
/// other version written must still be somewhere (the bucket, or a file at either site), and every file at each site must
/// open and hold its object's bytes. GEODRIVE_TWO_SITE_SEED replays a run (the seed is printed);
/// GEODRIVE_TWO_SITE_ROUNDS and GEODRIVE_TWO_SITE_OPERATIONS make it longer.
/// </summary>
public sealed class TwoSiteRandomTests(S3ServerFixture s3, ITestOutputHelper output) : IClassFixture<S3ServerFixture>
{
    private const string Policy = TwoSites.Policy;

    private static readonly string[] Names = ["n0.bin", "n1.bin", "n2.bin", "d/n3.bin", "d/n4.bin"];

    [Fact]
    public async Task Random_changes_at_two_sites_never_lose_a_version_neither_site_replaced_knowingly()
    {
        var seed = Setting("GEODRIVE_TWO_SITE_SEED", Random.Shared.Next());
        var rounds = Setting("GEODRIVE_TWO_SITE_ROUNDS", 8);
        var operations = Setting("GEODRIVE_TWO_SITE_OPERATIONS", 80);
        output.WriteLine($"seed {seed} (replay: GEODRIVE_TWO_SITE_SEED={seed}); {rounds} rounds of {operations} operations");
        Console.WriteLine($"two-site random test: seed {seed}");
        for (var round = 0; round < rounds; round++)
        {
            await new Run(s3, seed + round, output).RunAsync(operations);
        }
    }

    private static int Setting(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) ? value : fallback;

    /// <summary>One round: two fresh sites on a fresh bucket, the operations, the catch-up, the checks.</summary>
    private sealed class Run(S3ServerFixture s3, int seed, ITestOutputHelper output)
    {
        private readonly Random _random = new(seed);
        // SHA-256 (hex) of every version written -> its label in the log.
        private readonly Dictionary<string, string> _written = new(StringComparer.OrdinalIgnoreCase);
        private readonly HashSet<string> _replacedKnowingly = new(StringComparer.OrdinalIgnoreCase);
        private readonly List<string> _log = [];
        private readonly Dictionary<string, long> _eventsLogged = [];

        public async Task RunAsync(int operations)
        {
            await using var a = new DriveRig(s3, Policy);
            await using var b = new DriveRig(s3, Policy, bucket: a.Bucket);
            try
            {
                for (var i = 0; i < operations; i++)
                {
                    var (site, name) = _random.Next(2) == 0 ? (a, "A") : (b, "B");
                    await StepAsync(site, name, i);
                    LogEvents(a, "A");
                    LogEvents(b, "B");
                }
                await CatchUpAsync(a, b);
                await CheckAsync(a, b);
            }
            catch
            {
                output.WriteLine($"round seed {seed}:");
                _log.ForEach(output.WriteLine);
                throw;
            }
        }

        private async Task StepAsync(DriveRig site, string name, int step)
        {
            var path = Names[_random.Next(Names.Length)];
            var roll = _random.Next(100);
            if (roll < 50)
            {
                // The model's look at what the user replaces and the user's change are one step: nothing of this site's in the
                // background (an upload moving the file aside, a renamed stub's bytes coming home) may change the file in between,
                // or the look reads bytes it cannot tell (the other site's work goes on meanwhile). A user's change that does
                // meet a conflict's stub is DeleteMeetsChangeElsewhereTests' (ADR 0043).
                await site.Engine.WhenUploadsIdleAsync();
            }
            try
            {
                switch (roll)
                {
                    case < 30:
                        var length = await WriteAsync(site, path, step);
                        _log.Add($"{step} {name} write {path} -> v{step} ({length} B)");
                        break;
                    case < 42:
                        var to = Names[_random.Next(Names.Length)];
                        if (to != path && File.Exists(site.Local(path)))
                        {
                            await SupersedeAsync(site, to);
                            EnsureFolder(site, to);
                            File.Move(site.Local(path), site.Local(to), overwrite: true);
                            site.Engine.Renamed(path, to, site.Caller, isDirectory: false);
                            _log.Add($"{step} {name} rename {path} -> {to}");
                        }
                        break;
                    case < 50:
                        if (File.Exists(site.Local(path)))
                        {
                            await SupersedeAsync(site, path);
                            File.Delete(site.Local(path));
                            site.Engine.Deleted(path, site.Caller, isDirectory: false);
                            _log.Add($"{step} {name} delete {path}");
                        }
                        break;
                    case < 62:
                        if (site.Engine.GetFile(path) is { State: FileState.Cached })
                        {
                            await site.Engine.StubAsync(path);
                            _log.Add($"{step} {name} stub {path}");
                        }
                        break;
                    case < 74:
                        if (File.Exists(site.Local(path)))
                        {
                            var read = await site.ReadAsync(path);
                            _log.Add($"{step} {name} read {path}: {_written.GetValueOrDefault(Sha(read), "?")}");
                        }
                        break;
                    case < 88:
                        site.Clock.Advance(TimeSpan.FromMinutes(5));
                        await site.Engine.BeforeEnumerateAsync("", site.Caller);
                        await site.Engine.BeforeEnumerateAsync("d", site.Caller);
                        await SettleAsync(site);
                        _log.Add($"{step} {name} sync");
                        break;
                    case < 98:
                        await SettleAsync(site);
                        _log.Add($"{step} {name} settle");
                        break;
                    default:
                        await site.RestartAsync();
                        _log.Add($"{step} {name} restart");
                        break;
                }
            }
            catch (GeoDriveException ex)
            {
                // A refusal (a stub of a file in use, a version replaced while it was read, a name deleted elsewhere): the
                // user sees it and nothing changed; the model records nothing for it.
                _log.Add($"{step} {name} refused on {path}: {ex.ErrorId} {ex.Message}");
            }
        }

        /// <summary>The site's events since the last step, in the log a failure prints.</summary>
        private void LogEvents(DriveRig site, string name)
        {
            var last = _eventsLogged.GetValueOrDefault(name);
            foreach (var e in site.Engine.ReadEvents().Where(e => e.Id > last).OrderBy(e => e.Id))
            {
                _log.Add($"    {name} event {e.Kind} {e.Path}: {e.Message}");
                _eventsLogged[name] = e.Id;
            }
        }

        /// <summary>An application truncates and writes the file: whatever it stood for once opened is replaced knowingly.</summary>
        private async Task<int> WriteAsync(DriveRig site, string path, int step)
        {
            var content = new byte[200 + _random.Next(3_000)];
            _random.NextBytes(content);
            _written[Sha(content)] = $"v{step}";
            var local = site.Local(path);
            EnsureFolder(site, path);
            var existed = File.Exists(local);
            if (existed)
            {
                await SupersedeAsync(site, path);
                await site.Engine.OpenAsync(path, site.Caller, GeoDrive.Core.Ports.OpenIntent.Truncate);
                // The open may have followed a newer version (fileSync): the user replaces that one.
                await SupersedeAsync(site, path);
            }
            await File.WriteAllBytesAsync(local, content);
            if (!existed)
            {
                site.Engine.Created(path, site.Caller, isDirectory: false);
            }
            await site.Engine.ClosedAsync(path, site.Caller, modified: true);
            return content.Length;
        }

        /// <summary>The folder of <paramref name="path"/> is made at the site first, where it has not shown there yet.</summary>
        private static void EnsureFolder(DriveRig site, string path)
        {
            if (Path.GetDirectoryName(path) is { Length: > 0 } folder && !Directory.Exists(site.Local(folder)))
            {
                Directory.CreateDirectory(site.Local(folder));
                site.Engine.Created(folder, site.Caller, isDirectory: true);
            }
        }

        /// <summary>
        /// The version the site's file at <paramref name="path"/> holds or stands for is replaced by the user there, and so
        /// is the bucket's version the site's entry records (the one its upload or delete may replace), but not a version a
        /// conflict made the file a stub of and nobody here has opened (ADR 0043).
        /// </summary>
        private async Task SupersedeAsync(DriveRig site, string path)
        {
            if (!File.Exists(site.Local(path)))
            {
                return;
            }
            var entry = site.Engine.GetFile(path);
            string? version;
            try
            {
                version = entry is { State: FileState.Stubbed or FileState.Recalling }
                    ? entry.SeenETag is null ? null : entry.Checksum
                    : Sha(await File.ReadAllBytesAsync(site.Local(path)));
            }
            catch (FileNotFoundException)
            {
                // Moved aside by the site's upload meeting another version this moment: the conflict copy keeps it.
                version = null;
            }
            if (version is not null)
            {
                _replacedKnowingly.Add(version);
                _log.Add($"    ({_written.GetValueOrDefault(version, "?")} at {path}, {entry?.State}, replaced knowingly)");
            }
            if (entry is { SeenETag: { } known, ObjectKey: { } key } && await site.Store.HeadAsync(key) is { } there
                && string.Equals(there.ETag?.Trim('"'), known.Trim('"'), StringComparison.OrdinalIgnoreCase) && await site.ObjectBytesAsync(key) is { } bytes)
            {
                _replacedKnowingly.Add(Sha(bytes));
                _log.Add($"    ({_written.GetValueOrDefault(Sha(bytes), "?")} in the bucket at {key}, known there, replaced knowingly)");
            }
        }

        private static Task SettleAsync(DriveRig site) => TwoSites.SettleAsync(site);

        /// <summary>Both sites settle what they owe, pass the late-write grace and look at the bucket again, twice over.</summary>
        private static async Task CatchUpAsync(DriveRig a, DriveRig b)
        {
            for (var pass = 0; pass < 3; pass++)
            {
                foreach (var site in new[] { a, b })
                {
                    await SettleAsync(site);
                    site.Clock.Advance(site.Engine.Options.LateWriteGrace + TimeSpan.FromMinutes(5));
                    await site.Engine.BeforeEnumerateAsync("", site.Caller);
                    await site.Engine.BeforeEnumerateAsync("d", site.Caller);
                    await SettleAsync(site);
                }
            }
        }

        private async Task CheckAsync(DriveRig a, DriveRig b)
        {
            var present = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            await foreach (var info in a.Store.ListAsync(""))
            {
                if (!info.Key.EndsWith('/') && await a.ObjectBytesAsync(info.Key) is { } bytes)
                {
                    present.Add(Sha(bytes));
                }
            }
            foreach (var (site, name) in new[] { (a, "A"), (b, "B") })
            {
                foreach (var file in Directory.EnumerateFiles(site.CachePath, "*", SearchOption.AllDirectories))
                {
                    var path = Path.GetRelativePath(site.CachePath, file).Replace('\\', '/');
                    if (path.StartsWith(DriveEngineOptions.InternalFolder + "/", StringComparison.Ordinal))
                    {
                        continue;
                    }
                    byte[] read;
                    try
                    {
                        read = await site.ReadAsync(path);
                    }
                    catch (GeoDriveException ex)
                    {
                        Assert.Fail($"site {name}: '{path}' does not open once both sites caught up: {ex.ErrorId} {ex.Message}");
                        throw;
                    }
                    present.Add(Sha(read));
                    var inBucket = await site.ObjectBytesAsync(path);
                    Assert.True(inBucket is not null && Sha(inBucket) == Sha(read),
                        $"site {name}: '{path}' holds {_written.GetValueOrDefault(Sha(read), "?")}, the bucket {(inBucket is null ? "nothing" : _written.GetValueOrDefault(Sha(inBucket), "?"))}");
                }
            }
            var lost = _written.Where(w => !_replacedKnowingly.Contains(w.Key) && !present.Contains(w.Key)).Select(w => w.Value).ToList();
            Assert.True(lost.Count == 0, $"round seed {seed}: versions lost that no site replaced knowingly: {string.Join(", ", lost)}");
        }

        private static string Sha(byte[] bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));
    }
}
