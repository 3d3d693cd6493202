using System.Globalization;
using GeoDrive.Core.Model;
using GeoDrive.Policies.Loading;

namespace GeoDrive.Policies.Model;

/// <summary>One setting of the merged policy as written in a policy file, and where it came from.</summary>
public sealed record PolicySetting(string Key, string Value, SourceLocation Origin)
{
    public override string ToString() => $"{Key} = {Value} ({Origin})";
}

public sealed partial class EffectivePolicy
{
    /// <summary>
    /// The merged policy setting by setting, in the order of docs/policies.md: every single value (with
    /// its default where no file sets it) and every list entry (spec.excludes[0] …), each with its origin.
    /// This is what Get-CloudPolicy -Effective prints.
    /// </summary>
    public IReadOnlyList<PolicySetting> Settings()
    {
        var settings = new List<PolicySetting>();
        void Add<T>(string key, PolicyValue<T> value, Func<T, string> format) => settings.Add(new(key, format(value.Value), value.Origin));

        Add("spec.stubbing.enabled", StubbingEnabled, Bool);
        Add("spec.stubbing.accessWait", AccessWait, PolicyUnits.FormatDuration);
        Add("spec.stubbing.minimumSize", MinimumSize, ByteSize.Format);
        for (var i = 0; i < StubbingRules.Count; i++)
        {
            var r = StubbingRules[i];
            var parts = new List<string> { "paths: " + Paths(r.Paths) };
            if (r.Pin is { } pin)
            {
                parts.Add("pin: " + Bool(pin.Value));
            }
            if (r.AccessWait is { } wait)
            {
                parts.Add("accessWait: " + PolicyUnits.FormatDuration(wait.Value));
            }
            settings.Add(new($"spec.stubbing.rules[{i}]", string.Join("; ", parts), r.Origin));
        }
        Add("spec.cacheThresholds.stubAbove", StubAbove, l => l.ToString());
        Add("spec.cacheThresholds.stubUntil", StubUntil, l => l.ToString());
        Add("spec.cacheThresholds.reserveFree", ReserveFree, l => l.ToString());
        Add("spec.upload.mode", UploadMode, m => m.ToString().ToLowerInvariant());
        Add("spec.upload.settle", Settle, PolicyUnits.FormatDuration);
        Add("spec.upload.updateWait", UpdateWait, PolicyUnits.FormatDuration);
        Add("spec.upload.peerChanges", PeerChanges, a => a.ToString().ToLowerInvariant());
        for (var i = 0; i < Excludes.Count; i++)
        {
            settings.Add(new($"spec.excludes[{i}]", Excludes[i].Pattern, Excludes[i].Origin));
        }
        for (var i = 0; i < Metadata.Count; i++)
        {
            var m = Metadata[i];
            var tags = string.Join(", ", m.Tags.Select(t => $"{t.Key}: {t.Value.Value}"));
            settings.Add(new($"spec.metadata[{i}]", $"paths: {Paths(m.Paths)}; tags: {{ {tags} }}{(m.ObjectTags is { Value: true } ? "; objectTags: true" : "")}", m.Origin));
        }
        for (var i = 0; i < ProcessExcludes.Count; i++)
        {
            var p = ProcessExcludes[i];
            var parts = new List<string> { "process: " + p.Process.Value.Pattern };
            Optional(parts, "folderSync", p.FolderSync);
            Optional(parts, "fileSync", p.FileSync);
            Optional(parts, "fileNotFound", p.FileNotFound);
            Optional(parts, "recall", p.Recall);
            settings.Add(new($"spec.processExcludes[{i}]", string.Join("; ", parts), p.Origin));
        }
        Add("spec.throttle.upload", UploadLimit, PolicyUnits.FormatRate);
        Add("spec.throttle.download", DownloadLimit, PolicyUnits.FormatRate);
        for (var i = 0; i < ThrottleSchedule.Count; i++)
        {
            var w = ThrottleSchedule[i];
            var days = string.Join(", ", w.Days.OrderBy(d => ((int)d + 6) % 7).Select(d => d.ToString()[..3]));
            var parts = new List<string> { $"days: [{days}]", $"from: {Time(w.From)}", $"to: {Time(w.To)}" };
            if (w.Upload is { } up)
            {
                parts.Add("upload: " + PolicyUnits.FormatRate(up.Value));
            }
            if (w.Download is { } down)
            {
                parts.Add("download: " + PolicyUnits.FormatRate(down.Value));
            }
            settings.Add(new($"spec.throttle.schedule[{i}]", string.Join("; ", parts), w.Origin));
        }
        Add("spec.transfer.uploadThreads", UploadThreads, Number);
        Add("spec.transfer.restoreThreads", RestoreThreads, Number);
        Add("spec.transfer.multipart.threshold", MultipartThreshold, ByteSize.Format);
        Add("spec.transfer.multipart.partSize", PartSize, ByteSize.Format);
        Add("spec.transfer.multipart.uploadThreads", MultipartUploadThreads, Number);
        Add("spec.transfer.multipart.restoreThreads", MultipartRestoreThreads, Number);
        for (var i = 0; i < RecallJobs.Count; i++)
        {
            var j = RecallJobs[i];
            settings.Add(new($"spec.recallJobs[{i}]", $"name: {j.Name.Value}; paths: {Paths(j.Paths)}; schedule: \"{j.Schedule.Value.Expression}\"", j.Origin));
        }
        return settings;

        static string Bool(bool b) => b ? "true" : "false";
        static string Number(int n) => n.ToString(CultureInfo.InvariantCulture);
        static string Paths(IReadOnlyList<PathPattern> paths) => "[" + string.Join(", ", paths.Select(p => p.Pattern)) + "]";
        static string Time(TimeSpan t) => $"{(int)t.TotalHours:00}:{t.Minutes:00}";
        static void Optional<T>(List<string> parts, string key, PolicyValue<T>? value) where T : struct, Enum
        {
            if (value is not null)
            {
                parts.Add($"{key}: {value.Value.ToString().ToLowerInvariant()}");
            }
        }
    }
}
