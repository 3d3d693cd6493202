using System.Text.Json;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Loading;
using GeoDrive.Policies.Model;

namespace GeoDrive.Service.Drives;

/// <summary>The text of each policy file of a drive, in order, as it was when the set loaded.</summary>
public sealed record PolicyFileText(string Path, string Text);

/// <summary>A policy that loaded, and the texts it was made of.</summary>
public sealed record LoadedPolicy(PolicyEvaluator Policy, IReadOnlyList<PolicyFileText> Files);

/// <summary>
/// The service's copy of each drive's last good policy files (home/policies/NAME.json, 0600 in a 0700
/// folder beside drives.json), written whenever a drive's policy loads. A file broken while the service
/// was stopped (an editor cut off mid-save) then starts the drive with this copy instead of keeping it down.
/// </summary>
public sealed class LastGoodPolicyStore
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { WriteIndented = true };
    private readonly string _folder;
    private readonly Lock _gate = new();

    public LastGoodPolicyStore(string home)
    {
        _folder = Path.Combine(home, "policies");
        Directory.CreateDirectory(_folder);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(_folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
    }

    public string FileOf(string driveName) => Path.Combine(_folder, driveName + ".json");

    /// <summary>Keeps <paramref name="loaded"/> as the drive's last good policy (rewritten only when it changed).</summary>
    public void Save(string driveName, LoadedPolicy loaded)
    {
        var bytes = JsonSerializer.SerializeToUtf8Bytes(loaded.Files, Json);
        lock (_gate)
        {
            var path = FileOf(driveName);
            if (File.Exists(path) && File.ReadAllBytes(path).AsSpan().SequenceEqual(bytes))
            {
                return;
            }
            var temp = path + ".tmp";
            var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write };
            if (!OperatingSystem.IsWindows())
            {
                options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
            }
            using (var stream = new FileStream(temp, options))
            {
                stream.Write(bytes);
                stream.Flush(flushToDisk: true);
            }
            // Rename: a crash never leaves half a copy, which would defeat its purpose.
            File.Move(temp, path, overwrite: true);
        }
    }

    /// <summary>The drive's last good policy, or null when none was kept (or the copy itself does not load).</summary>
    public LoadedPolicy? Load(string driveName)
    {
        lock (_gate)
        {
            var path = FileOf(driveName);
            if (!File.Exists(path))
            {
                return null;
            }
            try
            {
                var files = JsonSerializer.Deserialize<List<PolicyFileText>>(File.ReadAllBytes(path), Json);
                if (files is null)
                {
                    return null;
                }
                return new LoadedPolicy(new PolicyEvaluator(EffectivePolicy.Merge(files.Select(f => PolicyLoader.Parse(f.Text, f.Path)).ToList())), files);
            }
            catch (Exception ex) when (ex is JsonException or PolicyException or IOException)
            {
                return null;
            }
        }
    }

    public void Delete(string driveName)
    {
        lock (_gate)
        {
            File.Delete(FileOf(driveName));
        }
    }
}
