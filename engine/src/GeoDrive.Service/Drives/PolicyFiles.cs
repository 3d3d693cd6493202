using GeoDrive.Core.Errors;
using GeoDrive.Policies.Evaluation;

namespace GeoDrive.Service.Drives;

/// <summary>
/// A drive's ordered policy files and the last good policy made of them. Checked on every scheduler
/// pass (a stat per file), so a saved file takes effect within two seconds, whatever way the
/// editor saves (in place, or write-and-rename). A change is read once it held still from one look to the
/// next: a save caught half-written (truncated, not yet written) is never read, so it is neither refused
/// for what it lacked nor, cut at a line, put in force without the rest. A file that does not load is
/// refused whole: the last good policy stays in force.
/// </summary>
public sealed class PolicyFiles
{
    private IReadOnlyList<string> _paths;
    private string _fingerprint;
    // A change seen at the last look, read if the files are still so at the next.
    private string? _changing;

    /// <param name="refusedAtStart">Why the files on disk did not load at start, when the drive started with the last good copy.</param>
    public PolicyFiles(IReadOnlyList<string> paths, PolicyEvaluator loaded, GeoDriveException? refusedAtStart = null)
    {
        _paths = paths;
        // The fingerprint of the files as they are (broken or not): the next save of any of them is a change.
        _fingerprint = Fingerprint(paths);
        Current = loaded;
        LastRefusal = refusedAtStart;
    }

    /// <summary>Called with each set of files that loaded (the service keeps it as the last good policy).</summary>
    public Action<LoadedPolicy>? Loaded { get; init; }

    public IReadOnlyList<string> Paths => _paths;

    /// <summary>The policy in force: the last set of files that loaded.</summary>
    public PolicyEvaluator Current { get; private set; }

    /// <summary>Why the files on disk are not in force, when the last attempt failed.</summary>
    public GeoDriveException? LastRefusal { get; private set; }

    /// <summary>
    /// Set-CloudDrive -PolicyPath: another list of files, already loaded and checked by the caller;
    /// from now on the scheduler's reload watches these.
    /// </summary>
    public void Replace(IReadOnlyList<string> paths, PolicyEvaluator loaded)
    {
        _paths = paths;
        _fingerprint = Fingerprint(paths);
        _changing = null;
        Current = loaded;
        LastRefusal = null;
    }

    /// <summary>
    /// Loads the files again if they changed and held still since the last look; what happened, or null when nothing
    /// changed or a change is still settling (CI, 2026-11-29: a broken save was refused twice, once half-written).
    /// </summary>
    public PolicyReload? ReloadIfChanged()
    {
        var fingerprint = Fingerprint(_paths);
        if (fingerprint == _fingerprint)
        {
            _changing = null;
            return null;
        }
        if (fingerprint != _changing)
        {
            _changing = fingerprint;
            return null;
        }
        _changing = null;
        _fingerprint = fingerprint;
        try
        {
            var loaded = PolicySet.Read(_paths);
            Current = loaded.Policy;
            LastRefusal = null;
            Loaded?.Invoke(loaded);
            return new PolicyReload(Current, null);
        }
        catch (GeoDriveException ex)
        {
            LastRefusal = ex;
            return new PolicyReload(null, ex);
        }
    }

    /// <summary>Size and write time of each file (or "missing"): cheap, and changes with every save.</summary>
    private static string Fingerprint(IReadOnlyList<string> paths) => string.Join('|', paths.Select(p =>
    {
        var info = new FileInfo(p);
        return info.Exists ? $"{info.Length}:{info.LastWriteTimeUtc.Ticks}" : "missing";
    }));
}

/// <summary>The outcome of one reload: the new policy, or why the files were refused.</summary>
public sealed record PolicyReload(PolicyEvaluator? Policy, GeoDriveException? Refusal);
