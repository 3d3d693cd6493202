using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Text.RegularExpressions;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Policies.Globs;
using GeoDrive.Policies.Model;
using YamlDotNet.RepresentationModel;

namespace GeoDrive.Policies.Loading;

// The sections of spec (docs/architecture.md, "Policies"), each checked on its own and then against the others.
internal sealed partial class PolicyReader
{
    private static readonly (string Name, DayOfWeek Day)[] DayNames =
    [
        ("Mon", DayOfWeek.Monday), ("Tue", DayOfWeek.Tuesday), ("Wed", DayOfWeek.Wednesday), ("Thu", DayOfWeek.Thursday),
        ("Fri", DayOfWeek.Friday), ("Sat", DayOfWeek.Saturday), ("Sun", DayOfWeek.Sunday),
    ];

    // S3 puts at most 10 tags on an object, keys up to 128 and values up to 256 characters.
    private const int MaxTags = 10;

    // S3's minimum part (except the last) and maximum part size.
    private const long MinPartSize = 5L << 20;
    private const long MaxPartSize = 5L << 30;

    private PolicyDocument? ReadSpec(YamlNode node, PolicyValue<string>? name)
    {
        var spec = ReadSection(node, "spec", "stubbing", "cacheThresholds", "upload", "excludes", "metadata",
            "processExcludes", "throttle", "transfer", "recallJobs");
        if (spec is null)
        {
            return null;
        }
        var stubbing = spec["stubbing"] is { } s ? ReadStubbing(s) : new StubbingSettings();
        var thresholds = spec["cacheThresholds"] is { } c ? ReadCacheThresholds(c) : new CacheThresholds();
        var upload = spec["upload"] is { } u ? ReadUpload(u) : new UploadSettings();
        var excludes = spec["excludes"] is { } e ? Patterns(e, "spec.excludes") : [];
        var metadata = spec["metadata"] is { } m ? ReadMetadata(m) : [];
        var processes = spec["processExcludes"] is { } p ? ReadProcessExcludes(p) : [];
        var throttle = spec["throttle"] is { } t ? ReadThrottle(t) : new ThrottleSettings();
        var transfer = spec["transfer"] is { } x ? ReadTransfer(x) : new TransferSettings();
        var jobs = spec["recallJobs"] is { } j ? ReadRecallJobs(j) : [];

        CheckPinnedAndExcluded(stubbing, excludes);
        CheckContradictoryStubbingRules(stubbing);

        return name is null
            ? null
            : new PolicyDocument
            {
                File = _file,
                Name = name,
                Stubbing = stubbing,
                CacheThresholds = thresholds,
                Upload = upload,
                Excludes = excludes,
                Metadata = metadata,
                ProcessExcludes = processes,
                Throttle = throttle,
                Transfer = transfer,
                RecallJobs = jobs,
            };
    }

    private StubbingSettings ReadStubbing(YamlNode node)
    {
        var section = ReadSection(node, "spec.stubbing", "enabled", "accessWait", "minimumSize", "rules");
        if (section is null)
        {
            return new StubbingSettings();
        }
        var rules = new List<StubbingRule>();
        if (section["rules"] is { } rulesNode && ReadList(rulesNode, "spec.stubbing.rules", "[ { paths: [\"Active/**\"], pin: true } ]") is { } list)
        {
            for (var i = 0; i < list.Children.Count; i++)
            {
                if (ReadStubbingRule(list.Children[i], $"spec.stubbing.rules[{i}]") is { } rule)
                {
                    rules.Add(rule);
                }
            }
        }
        return new StubbingSettings
        {
            Enabled = Bool(section, "enabled"),
            AccessWait = Duration(section, "accessWait"),
            MinimumSize = Size(section, "minimumSize"),
            Rules = rules,
        };
    }

    private StubbingRule? ReadStubbingRule(YamlNode node, string path)
    {
        var rule = ReadSection(node, path, "paths", "pin", "accessWait");
        if (rule is null)
        {
            return null;
        }
        var paths = RequiredPatterns(rule);
        var pin = Bool(rule, "pin");
        var accessWait = Duration(rule, "accessWait");
        if (!rule.Has("pin") && !rule.Has("accessWait"))
        {
            Report(ErrorIds.PolicyMissingKey, rule.Anchor, $"{path} says neither 'pin' nor 'accessWait', so it changes nothing",
                "Add pin: true (never stub these paths) or accessWait: <duration> (their own access wait).");
        }
        if (pin is { Value: true } && rule.Has("accessWait"))
        {
            // A pinned file is never stubbed, so an access wait on the same rule could never take effect.
            Report(ErrorIds.PolicyBadValue, rule["accessWait"]!, $"{path} pins its paths and also gives them an accessWait; a pinned file is never stubbed, so the wait would never apply",
                "Remove accessWait from this rule, or put it in a rule of its own without pin: true.");
        }
        return new StubbingRule(paths, pin, accessWait, At(rule.Anchor));
    }

    private CacheThresholds ReadCacheThresholds(YamlNode node)
    {
        var section = ReadSection(node, "spec.cacheThresholds", "stubAbove", "stubUntil", "reserveFree");
        if (section is null)
        {
            return new CacheThresholds();
        }
        var above = Level(section, "stubAbove");
        var until = Level(section, "stubUntil");
        var reserve = Level(section, "reserveFree");

        // Threshold stubbing starts when usage passes stubAbove and stops at stubUntil; the other way round it would never stop.
        var effectiveAbove = above?.Value ?? PolicyDefaults.StubAbove;
        var effectiveUntil = until?.Value ?? PolicyDefaults.StubUntil;
        if ((above is not null || until is not null) && Comparable(effectiveAbove, effectiveUntil) && Amount(effectiveUntil) >= Amount(effectiveAbove))
        {
            var blame = until is not null ? section["stubUntil"]! : section["stubAbove"]!;
            var untilText = until is null ? $"{effectiveUntil}, the default" : effectiveUntil.ToString();
            var aboveText = above is null ? $"{effectiveAbove}, the default" : effectiveAbove.ToString();
            Report(ErrorIds.PolicyBadValue, blame, $"spec.cacheThresholds: stubUntil ({untilText}) must be below stubAbove ({aboveText}); stubbing starts above the one and stops at the other",
                "Set stubUntil lower than stubAbove, e.g. stubAbove: 85% and stubUntil: 70%.");
        }
        return new CacheThresholds { StubAbove = above, StubUntil = until, ReserveFree = reserve };

        static bool Comparable(CacheLevel a, CacheLevel b) => a.IsPercent == b.IsPercent;
        static double Amount(CacheLevel level) => level.Percent ?? level.Bytes;
    }

    private PolicyValue<CacheLevel>? Level(Section section, string key)
    {
        var node = section[key];
        if (node is null || ReadScalar(node, section.PathOf(key), "a percentage or a size") is not { } scalar)
        {
            return null;
        }
        if (!PolicyUnits.TryParseLevel(scalar.Value!, out var level, out var error, out var outOfRange))
        {
            Report(outOfRange ? ErrorIds.PolicyBadValue : ErrorIds.PolicyBadSize, scalar, $"{section.PathOf(key)}: {error}",
                "Write a percentage of the cache volume from 0% to 100% (e.g. 85%) or a size (e.g. 500GiB).");
            return null;
        }
        return new PolicyValue<CacheLevel>(level, At(scalar));
    }

    private UploadSettings ReadUpload(YamlNode node)
    {
        var section = ReadSection(node, "spec.upload", "mode", "settle", "updateWait", "peerChanges");
        return section is null
            ? new UploadSettings()
            : new UploadSettings
            {
                Mode = Choice(section, "mode", ("async", UploadMode.Async), ("sync", UploadMode.Sync)),
                Settle = Duration(section, "settle"),
                UpdateWait = Duration(section, "updateWait"),
                PeerChanges = Choice(section, "peerChanges", ("stub", PeerChangeAction.Stub), ("recall", PeerChangeAction.Recall)),
            };
    }

    private List<MetadataRule> ReadMetadata(YamlNode node)
    {
        var rules = new List<MetadataRule>();
        if (ReadList(node, "spec.metadata", "[ { paths: [\"**/*.pdf\"], tags: { department: finance } } ]") is not { } list)
        {
            return rules;
        }
        for (var i = 0; i < list.Children.Count; i++)
        {
            var path = $"spec.metadata[{i}]";
            if (ReadSection(list.Children[i], path, "paths", "tags", "objectTags") is not { } rule)
            {
                continue;
            }
            var paths = RequiredPatterns(rule);
            var tags = new Dictionary<string, PolicyValue<string>>(StringComparer.Ordinal);
            if (Require(rule, "tags", "tags: { department: finance }") is { } tagsNode)
            {
                ReadTags(tagsNode, rule.PathOf("tags"), tags);
            }
            rules.Add(new MetadataRule(paths, tags, At(rule.Anchor), Bool(rule, "objectTags")));
        }
        return rules;
    }

    private void ReadTags(YamlNode node, string path, Dictionary<string, PolicyValue<string>> tags)
    {
        if (node is not YamlMappingNode map || map.Children.Count == 0)
        {
            Report(node is YamlMappingNode ? ErrorIds.PolicyBadValue : ErrorIds.PolicyWrongType, node,
                $"{path} must be a map of at least one tag (name: value) but is {(node is YamlMappingNode ? "empty" : Describe(node))}",
                "Write the tags as { department: finance, retention: 7y }.");
            return;
        }
        if (map.Children.Count > MaxTags)
        {
            Report(ErrorIds.PolicyBadValue, map, $"{path} has {map.Children.Count} tags; S3 allows at most {MaxTags} on an object",
                "Keep at most 10 tags per rule.");
        }
        foreach (var (keyNode, valueNode) in map.Children)
        {
            if (keyNode is not YamlScalarNode { Value: { Length: > 0 } key })
            {
                Report(ErrorIds.PolicyWrongType, keyNode, $"a tag name in {path} is {Describe(keyNode)}; tag names are plain words", "Write name: value.");
                continue;
            }
            if (key.Length > 128 || !TagText().IsMatch(key))
            {
                Report(ErrorIds.PolicyBadValue, keyNode, $"the tag name '{key}' in {path} is not allowed by S3 (at most 128 ASCII letters, digits, spaces and + - = . _ : / @: tags travel as user metadata in HTTP headers)",
                    "Rename the tag.");
                continue;
            }
            if (ReadScalar(valueNode, $"{path}.{key}", "a tag value") is not { } value)
            {
                continue;
            }
            var unknown = TagVariables.Unknown(value.Value!);
            if (unknown is not null)
            {
                Report(ErrorIds.PolicyBadValue, value, $"the value of tag '{key}' in {path} uses the unknown variable '${{{unknown}}}'; the variables are {TagVariables.List}",
                    "Use one of those variables, or write the text without ${ }.");
                continue;
            }
            if (value.Value!.Length > 256 || !TagText().IsMatch(TagVariables.Strip(value.Value)))
            {
                Report(ErrorIds.PolicyBadValue, value, $"the value of tag '{key}' in {path} is not allowed by S3 (at most 256 ASCII letters, digits, spaces and + - = . _ : / @: tags travel as user metadata in HTTP headers)",
                    "Write the value in ASCII (e.g. 'Jose' for 'José'); text filled in by a variable such as ${name} may hold any character (it is percent-encoded).");
                continue;
            }
            tags[key] = new PolicyValue<string>(value.Value, At(value));
        }
    }

    private List<ProcessRule> ReadProcessExcludes(YamlNode node)
    {
        var rules = new List<ProcessRule>();
        if (ReadList(node, "spec.processExcludes", "[ { process: \"backup*\", recall: stream } ]") is not { } list)
        {
            return rules;
        }
        (string, SyncAction)[] syncChoices = [("sync", SyncAction.Sync), ("skip", SyncAction.Skip)];
        for (var i = 0; i < list.Children.Count; i++)
        {
            var path = $"spec.processExcludes[{i}]";
            if (ReadSection(list.Children[i], path, "process", "folderSync", "fileSync", "fileNotFound", "recall") is not { } rule)
            {
                continue;
            }
            var process = ReadProcessPattern(rule);
            var folderSync = Choice(rule, "folderSync", syncChoices);
            var fileSync = Choice(rule, "fileSync", syncChoices);
            var fileNotFound = Choice(rule, "fileNotFound", syncChoices);
            var recall = Choice(rule, "recall", ("hydrate", RecallAction.Hydrate), ("stream", RecallAction.Stream), ("deny", RecallAction.Deny));
            if (!rule.Has("folderSync") && !rule.Has("fileSync") && !rule.Has("fileNotFound") && !rule.Has("recall"))
            {
                Report(ErrorIds.PolicyMissingKey, rule.Anchor, $"{path} says none of folderSync, fileSync, fileNotFound or recall, so it changes nothing",
                    "Add at least one, e.g. recall: stream.");
            }
            if (process is not null)
            {
                rules.Add(new ProcessRule(process, folderSync, fileSync, fileNotFound, recall, At(rule.Anchor)));
            }
        }
        return rules;
    }

    private PolicyValue<Glob>? ReadProcessPattern(Section rule)
    {
        if (Require(rule, "process", "process: \"MsMpEng.exe\"") is not { } node
            || ReadScalar(node, rule.PathOf("process"), "a process name pattern") is not { } scalar)
        {
            return null;
        }
        string? error = null;
        if (scalar.Value!.Contains('/', StringComparison.Ordinal) || !Glob.TryParse(scalar.Value, out var glob, out error))
        {
            Report(ErrorIds.PolicyBadGlob, scalar, $"{rule.PathOf("process")}: the pattern '{scalar.Value}' is not valid: {error ?? "a process name has no '/'; give the image name only"}",
                "Write the process image name, with * and ? if needed, e.g. \"backup*\".");
            return null;
        }
        return new PolicyValue<Glob>(glob, At(scalar));
    }

    private ThrottleSettings ReadThrottle(YamlNode node)
    {
        var section = ReadSection(node, "spec.throttle", "upload", "download", "schedule");
        if (section is null)
        {
            return new ThrottleSettings();
        }
        var windows = new List<ThrottleWindow>();
        if (section["schedule"] is { } scheduleNode
            && ReadList(scheduleNode, "spec.throttle.schedule", "[ { days: [Mon, Fri], from: \"08:00\", to: \"18:00\", upload: 20MB/s } ]") is { } list)
        {
            for (var i = 0; i < list.Children.Count; i++)
            {
                if (ReadThrottleWindow(list.Children[i], $"spec.throttle.schedule[{i}]") is { } window)
                {
                    windows.Add(window);
                }
            }
        }
        return new ThrottleSettings { Upload = Rate(section, "upload"), Download = Rate(section, "download"), Schedule = windows };
    }

    private ThrottleWindow? ReadThrottleWindow(YamlNode node, string path)
    {
        if (ReadSection(node, path, "days", "from", "to", "upload", "download") is not { } window)
        {
            return null;
        }
        var days = new HashSet<DayOfWeek>();
        var daysOk = Require(window, "days", "days: [Mon, Tue, Wed, Thu, Fri]") is { } daysNode && ReadDays(daysNode, window.PathOf("days"), days);
        var from = Require(window, "from", "from: \"08:00\"") is not null ? Value<TimeSpan>(window, "from", ErrorIds.PolicyBadValue, "a time", ParseTime, "Write a time of day as \"HH:mm\", e.g. \"08:00\".") : null;
        var to = Require(window, "to", "to: \"18:00\"") is not null ? Value<TimeSpan>(window, "to", ErrorIds.PolicyBadValue, "a time", ParseTime, "Write a time of day as \"HH:mm\", e.g. \"18:00\" (\"24:00\" for midnight at the end of the day).") : null;
        var upload = Rate(window, "upload");
        var download = Rate(window, "download");
        if (!window.Has("upload") && !window.Has("download"))
        {
            Report(ErrorIds.PolicyMissingKey, window.Anchor, $"{path} sets neither 'upload' nor 'download', so it changes nothing",
                "Add upload: <rate> or download: <rate>, e.g. upload: 20MB/s.");
        }
        if (from is not null && to is not null && from.Value >= to.Value)
        {
            Report(ErrorIds.PolicyBadValue, window["to"]!, $"{path}: 'to' ({FormatTime(to.Value)}) must be later than 'from' ({FormatTime(from.Value)})",
                "For a window across midnight write two windows, e.g. \"22:00\"–\"24:00\" and \"00:00\"–\"06:00\".");
        }
        return daysOk && from is not null && to is not null
            ? new ThrottleWindow(days, from.Value, to.Value, upload, download, At(window.Anchor))
            : null;
    }

    private bool ReadDays(YamlNode node, string path, HashSet<DayOfWeek> days)
    {
        if (ReadList(node, path, "[Mon, Tue, Wed, Thu, Fri]") is not { } list)
        {
            return false;
        }
        if (list.Children.Count == 0)
        {
            Report(ErrorIds.PolicyBadValue, list, $"{path} is empty, so the window would never apply", "Name at least one day, e.g. [Sat, Sun].");
            return false;
        }
        var ok = true;
        var names = DayNames.Select(d => d.Name).ToArray();
        foreach (var item in list.Children)
        {
            if (ReadScalar(item, path, "a day name") is not { } scalar)
            {
                ok = false;
                continue;
            }
            var text = scalar.Value!.Trim();
            var index = Array.FindIndex(DayNames, d => d.Name.Equals(text, StringComparison.OrdinalIgnoreCase)
                || d.Day.ToString().Equals(text, StringComparison.OrdinalIgnoreCase));
            if (index < 0)
            {
                var suggestion = KeySuggestion.Closest(text, names);
                Report(ErrorIds.PolicyBadValue, scalar, $"{path}: '{text}' is not a day" + (suggestion is null ? "" : $"; did you mean '{suggestion}'?"),
                    "Write days as Mon, Tue, Wed, Thu, Fri, Sat, Sun.");
                ok = false;
                continue;
            }
            if (!days.Add(DayNames[index].Day))
            {
                Report(ErrorIds.PolicyBadValue, scalar, $"{path}: '{text}' is listed twice", "List each day once.");
                ok = false;
            }
        }
        return ok;
    }

    private TransferSettings ReadTransfer(YamlNode node)
    {
        var section = ReadSection(node, "spec.transfer", "uploadThreads", "restoreThreads", "multipart");
        if (section is null)
        {
            return new TransferSettings();
        }
        var multipart = new MultipartSettings();
        if (section["multipart"] is { } multipartNode
            && ReadSection(multipartNode, "spec.transfer.multipart", "threshold", "partSize", "uploadThreads", "restoreThreads") is { } m)
        {
            var threshold = Size(m, "threshold");
            var partSize = Size(m, "partSize");
            if (threshold is not null && threshold.Value < MinPartSize)
            {
                Report(ErrorIds.PolicyBadValue, m["threshold"]!, $"spec.transfer.multipart.threshold is {ByteSize.Format(threshold.Value)}; below 5 MiB (S3's smallest part) multipart cannot help",
                    "Set it to 5MiB or more; 64MiB suits most links.");
                threshold = null;
            }
            if (partSize is not null && (partSize.Value < MinPartSize || partSize.Value > MaxPartSize))
            {
                Report(ErrorIds.PolicyBadValue, m["partSize"]!, $"spec.transfer.multipart.partSize is {ByteSize.Format(partSize.Value)}; S3 takes parts from 5 MiB to 5 GiB",
                    "Choose a part size from 5MiB to 5GiB, e.g. 16MiB.");
                partSize = null;
            }
            multipart = new MultipartSettings
            {
                Threshold = threshold,
                PartSize = partSize,
                UploadThreads = Count(m, "uploadThreads", 1, 64),
                RestoreThreads = Count(m, "restoreThreads", 1, 64),
            };
        }
        return new TransferSettings
        {
            UploadThreads = Count(section, "uploadThreads", 1, 256),
            RestoreThreads = Count(section, "restoreThreads", 1, 256),
            Multipart = multipart,
        };
    }

    private List<RecallJob> ReadRecallJobs(YamlNode node)
    {
        var jobs = new List<RecallJob>();
        if (ReadList(node, "spec.recallJobs", "[ { name: morning-prewarm, paths: [\"Active/**\"], schedule: \"0 6 * * 1-5\" } ]") is not { } list)
        {
            return jobs;
        }
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        for (var i = 0; i < list.Children.Count; i++)
        {
            var path = $"spec.recallJobs[{i}]";
            if (ReadSection(list.Children[i], path, "name", "paths", "schedule", "timeZone") is not { } job)
            {
                continue;
            }
            var name = Require(job, "name", "name: morning-prewarm") is not null ? Text(job, "name") : null;
            if (name is not null && !seen.Add(name.Value))
            {
                Report(ErrorIds.PolicyBadValue, job["name"]!, $"{path}: a recall job named '{name.Value}' is already defined above", "Give each recall job its own name.");
            }
            var paths = RequiredPatterns(job);
            var schedule = Require(job, "schedule", "schedule: \"0 6 * * 1-5\"") is not null
                ? Value<CronSchedule>(job, "schedule", ErrorIds.PolicyBadValue, "a cron schedule", ParseCron,
                    "Write five cron fields in quotes: minute hour day-of-month month day-of-week, e.g. \"0 6 * * 1-5\", or @daily, @hourly, @weekly, @monthly.")
                : null;
            var zone = Value<string>(job, "timeZone", ErrorIds.PolicyBadValue, "a time zone", ParseTimeZone,
                "Give an IANA time zone such as \"Europe/Berlin\" or \"UTC\", or leave timeZone out for the service's local time.");
            if (name is not null && schedule is not null)
            {
                jobs.Add(new RecallJob(name, paths, schedule, At(job.Anchor), zone));
            }
        }
        return jobs;
    }

    // The one contradiction between sections that can be seen without knowing the files: the very same
    // pattern both excluded and pinned. (Overlapping patterns are resolved at run time: exclusion wins.)
    private void CheckPinnedAndExcluded(StubbingSettings stubbing, List<PathPattern> excludes)
    {
        foreach (var rule in stubbing.Rules.Where(r => r.Pin is { Value: true }))
        {
            foreach (var pinned in rule.Paths)
            {
                var excluded = excludes.FirstOrDefault(e => string.Equals(e.Pattern.Trim('/'), pinned.Pattern.Trim('/'), StringComparison.OrdinalIgnoreCase));
                if (excluded is not null)
                {
                    Report(ErrorIds.PolicyBadValue, pinned.Origin.Line, pinned.Origin.Column,
                        $"the pattern '{pinned.Pattern}' is pinned here but also excluded at line {excluded.Origin.Line}; an excluded file is never uploaded, so it cannot be pinned",
                        "Remove it from spec.excludes or from the pin rule.");
                }
            }
        }
    }

    private static bool ParseCron(string text, out CronSchedule value, [NotNullWhen(false)] out string? error)
    {
        var ok = CronSchedule.TryParse(text, out var schedule, out error);
        value = schedule!;
        return ok;
    }

    private static bool ParseTimeZone(string text, out string value, [NotNullWhen(false)] out string? error)
    {
        value = text.Trim();
        try
        {
            value = TimeZoneInfo.FindSystemTimeZoneById(value).Id;
            error = null;
            return true;
        }
        catch (Exception ex) when (ex is TimeZoneNotFoundException or InvalidTimeZoneException)
        {
            error = $"'{text}' is not a time zone this machine knows";
            return false;
        }
    }

    private static bool ParseTime(string text, out TimeSpan value, [NotNullWhen(false)] out string? error)
    {
        value = default;
        var match = TimeOfDay().Match(text.Trim());
        if (!match.Success)
        {
            error = $"'{text}' is not a time of day; write \"HH:mm\" from \"00:00\" to \"24:00\"";
            return false;
        }
        var hours = int.Parse(match.Groups["h"].Value, CultureInfo.InvariantCulture);
        var minutes = int.Parse(match.Groups["m"].Value, CultureInfo.InvariantCulture);
        if (hours > 24 || minutes > 59 || (hours == 24 && minutes != 0))
        {
            error = $"'{text}' is not a time of day; hours go from 00 to 23 (24:00 means the end of the day) and minutes from 00 to 59";
            return false;
        }
        value = new TimeSpan(hours, minutes, 0);
        error = null;
        return true;
    }

    private static string FormatTime(TimeSpan time) =>
        $"{(int)time.TotalHours:00}:{time.Minutes:00}";

    [GeneratedRegex(@"^(?<h>\d{1,2}):(?<m>\d{2})$", RegexOptions.CultureInvariant)]
    private static partial Regex TimeOfDay();

    [GeneratedRegex(@"^[A-Za-z0-9 _.:/=+\-@]*$", RegexOptions.CultureInvariant)]
    private static partial Regex TagText();
}
