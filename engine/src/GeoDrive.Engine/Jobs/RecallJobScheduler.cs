using System.Text.RegularExpressions;
using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Files;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Model;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Engine.Jobs;

/// <summary>What a recall job scheduler needs of its drive.</summary>
/// <param name="DriveName">For messages.</param>
/// <param name="Policy">The policy in force (it changes on a reload).</param>
/// <param name="Stubs">The drive's stubs as the index holds them now.</param>
/// <param name="Recall">Recalls one file, the same path as Invoke-CloudRecall.</param>
/// <param name="Record">Puts an event in the drive's event log (kind, path, message, error id).</param>
/// <param name="TimeZone">The zone of schedules that name none (null: the machine's).</param>
public sealed record RecallJobDrive(
    string DriveName,
    Func<PolicyEvaluator> Policy,
    Func<IEnumerable<FileEntry>> Stubs,
    Func<string, CancellationToken, Task> Recall,
    Action<DriveEventKind, string?, string, string?> Record,
    TimeZoneInfo? TimeZone);

/// <summary>
/// Scheduled recall jobs (pre-warming) of one drive: registered by cmdlet or declared in the policy's
/// recallJobs. The drive's tick starts a runner when a job is due; the runner runs due jobs one after
/// another (one at a time per drive), each recalling its stubs through the drive's recall, the same path
/// as Invoke-CloudRecall. Each job remembers up to when its cron slots are handled, so a restart neither
/// repeats a run nor loses one: slots missed while the service was down make one run at start.
/// </summary>
public sealed partial class RecallJobScheduler(RecallJobDrive drive, IRecallJobStore store, IClock clock, ILogger logger)
{
    private readonly Lock _jobGate = new();
    private readonly CancellationTokenSource _jobsStopping = new();
    private Dictionary<string, RecallJobRecord>? _jobs;
    private Task _jobRunner = Task.CompletedTask;
    private volatile string? _runningJob;

    private IRecallJobStore JobStore => store;

    private string Name => drive.DriveName;

    private void Record(DriveEventKind kind, string? path, string message, string? errorId = null) => drive.Record(kind, path, message, errorId);

    /// <summary>The job runner of the moment (completed when no job runs): tests await it after a tick.</summary>
    public Task Idle
    {
        get
        {
            lock (_jobGate)
            {
                return _jobRunner;
            }
        }
    }

    /// <summary>Every job of the drive (the policy's and the registered ones), by name.</summary>
    public IReadOnlyList<RecallJobView> List()
    {
        lock (_jobGate)
        {
            return [.. CurrentJobs().Select(j => new RecallJobView(j.Record, j.Zone.Id, j.DeclaredAt, j.Schedule.NextUtcAfter(j.Record.HandledUntilUtc, j.Zone), j.Record.Name.Equals(_runningJob, StringComparison.OrdinalIgnoreCase)))
                .OrderBy(v => v.Record.Name, StringComparer.OrdinalIgnoreCase)];
        }
    }

    /// <summary>Register-CloudRecallJob: a new job whose first run is its first cron slot from now.</summary>
    public RecallJobView Register(RecallJobSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        if (!JobNameRegex().IsMatch(spec.Name))
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                $"'{spec.Name}' is not a valid recall job name.", "Use 1-64 letters, digits, '.', '-' or '_', starting with a letter or digit.");
        }
        ParseSchedule(spec.Schedule);
        var zone = ResolveZone(spec.TimeZone);
        if (spec.Paths.Length == 0 || spec.Paths.Any(string.IsNullOrWhiteSpace))
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                "A recall job needs at least one path.", "Give -Path with drive-relative paths or patterns, e.g. -Path Active -Recurse.");
        }
        if (spec.ThrottleLimit is < 1 or > 256)
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                $"A throttle limit of {spec.ThrottleLimit} is out of range.", "Give -ThrottleLimit between 1 and 256.");
        }
        lock (_jobGate)
        {
            var existing = CurrentJobs().FirstOrDefault(j => j.Record.Name.Equals(spec.Name, StringComparison.OrdinalIgnoreCase));
            if (existing is not null)
            {
                throw existing.Record.Source == RecallJobSource.Policy
                    ? new GeoDriveException(ErrorIds.RecallJobExists, ErrorKind.ResourceExists,
                        $"The drive '{Name}' already has a recall job '{existing.Record.Name}', declared in its policy at {existing.DeclaredAt}.", "Choose another name.")
                    : new GeoDriveException(ErrorIds.RecallJobExists, ErrorKind.ResourceExists,
                        $"The drive '{Name}' already has a recall job named '{existing.Record.Name}'.", "Choose another name, or remove the old one with Unregister-CloudRecallJob first.");
            }
            var now = clock.UtcNow;
            var record = new RecallJobRecord
            {
                Name = spec.Name,
                Source = RecallJobSource.Registered,
                Paths = [.. spec.Paths.Select(p => p.Replace('\\', '/').Trim('/'))],
                Recurse = spec.Recurse,
                Schedule = spec.Schedule.Trim(),
                TimeZone = spec.TimeZone is null ? null : zone.Id,
                ThrottleLimit = spec.ThrottleLimit,
                RegisteredUtc = now,
                HandledUntilUtc = now,
            };
            JobStore.PutRecallJob(record);
            Jobs[record.Name] = record;
            Record(DriveEventKind.Policy, null, $"Recall job '{record.Name}' registered: {string.Join(", ", record.Paths)} at \"{record.Schedule}\".");
            var job = CurrentJobs().Single(j => j.Record == record);
            return new RecallJobView(record, zone.Id, null, job.Schedule.NextUtcAfter(now, zone), false);
        }
    }

    /// <summary>Unregister-CloudRecallJob. A policy's job is refused: the policy file is where it lives.</summary>
    public void Unregister(string name)
    {
        lock (_jobGate)
        {
            var job = CurrentJobs().FirstOrDefault(j => j.Record.Name.Equals(name, StringComparison.OrdinalIgnoreCase))
                ?? throw new GeoDriveException(ErrorIds.RecallJobNotFound, ErrorKind.ObjectNotFound,
                    $"The drive '{Name}' has no recall job named '{name}'.", "List the drive's jobs with Get-CloudRecallJob.");
            if (job.Record.Source == RecallJobSource.Policy)
            {
                throw new GeoDriveException(ErrorIds.RecallJobDeclaredInPolicy, ErrorKind.InvalidOperation,
                    $"The recall job '{job.Record.Name}' is declared in the drive's policy ({job.DeclaredAt}); Unregister-CloudRecallJob removes only jobs made by Register-CloudRecallJob.",
                    $"Edit the policy file and remove the job from spec.recallJobs ({job.DeclaredAt}); the drive picks the change up within seconds.");
            }
            JobStore.DeleteRecallJob(job.Record.Name);
            Jobs.Remove(job.Record.Name);
            Record(DriveEventKind.Policy, null, $"Recall job '{job.Record.Name}' unregistered.");
        }
    }

    /// <summary>A policy's job counts from when the drive got that policy (start or reload): its first run is its first slot after that.</summary>
    public void NoticePolicy()
    {
        lock (_jobGate)
        {
            CurrentJobs();
        }
    }

    /// <summary>Called by each tick: starts the runner when a job is due and none runs on this drive.</summary>
    public void StartDue()
    {
        lock (_jobGate)
        {
            if (!_jobRunner.IsCompleted || _jobsStopping.IsCancellationRequested)
            {
                return; // one at a time: a job that falls due meanwhile waits for the runner's next look
            }
            if (NextDueJob(clock.UtcNow) is null)
            {
                return;
            }
            var stopping = _jobsStopping.Token;
            _jobRunner = Task.Run(() => RunDueRecallJobsAsync(stopping), CancellationToken.None);
        }
    }

    /// <summary>Stops a running job (it is recorded as Interrupted and runs again at the next start) and waits for it.</summary>
    public async Task StopAsync()
    {
        Task runner;
        lock (_jobGate)
        {
            _jobsStopping.Cancel();
            runner = _jobRunner;
        }
        try
        {
            await runner;
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task RunDueRecallJobsAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            ScheduledJob? job;
            lock (_jobGate)
            {
                job = NextDueJob(clock.UtcNow);
                if (job is null)
                {
                    return;
                }
                _runningJob = job.Record.Name;
            }
            try
            {
                await RunRecallJobAsync(job, cancellationToken);
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                logger.LogError(ex, "{Drive}: recall job {Job} failed", Name, job.Record.Name);
            }
            finally
            {
                _runningJob = null;
            }
        }
    }

    private async Task RunRecallJobAsync(ScheduledJob job, CancellationToken cancellationToken)
    {
        var record = job.Record;
        lock (_jobGate)
        {
            record.RunCount++;
            record.LastRunStartUtc = clock.UtcNow;
            record.LastRunEndUtc = null;
            record.LastResult = RecallJobResult.Running;
            record.LastFiles = 0;
            record.LastBytes = 0;
            record.LastFailures = 0;
            record.LastMessage = null;
            JobStore.PutRecallJob(record);
        }
        var stubs = drive.Stubs().Where(e => job.Selects(e.Path)).OrderBy(e => e.Path, StringComparer.Ordinal).ToList();
        Record(DriveEventKind.Recall, null, $"Recall job '{record.Name}' started: {stubs.Count} stubbed files ({ByteSize.Format(stubs.Sum(s => s.Size))}).");
        string? firstError = null;
        string? firstErrorId = null;
        var result = RecallJobResult.Interrupted;
        try
        {
            var options = new ParallelOptions { MaxDegreeOfParallelism = record.ThrottleLimit, CancellationToken = cancellationToken };
            await Parallel.ForEachAsync(stubs, options, async (stub, ct) =>
            {
                try
                {
                    await drive.Recall(stub.Path, ct);
                    lock (_jobGate)
                    {
                        record.LastFiles++;
                        record.LastBytes += stub.Size;
                        JobStore.PutRecallJob(record); // progress survives a crash in the middle of the job
                    }
                }
                catch (GeoDriveException ex)
                {
                    lock (_jobGate)
                    {
                        record.LastFailures++;
                        firstError ??= $"{stub.Path}: {ex.Message} ({ex.ErrorId})";
                        firstErrorId ??= ex.ErrorId;
                        JobStore.PutRecallJob(record);
                    }
                }
            });
            result = record.LastFailures == 0 ? RecallJobResult.Succeeded
                : record.LastFiles == 0 ? RecallJobResult.Failed
                : RecallJobResult.PartlyFailed;
        }
        finally
        {
            lock (_jobGate)
            {
                var now = clock.UtcNow;
                record.LastRunEndUtc = now;
                record.LastResult = result;
                record.LastMessage = result == RecallJobResult.Interrupted
                    ? "The service stopped during the run; it runs again at the next start."
                    : firstError is null ? null : $"{record.LastFailures} of {stubs.Count} files failed; first: {firstError}";
                if (result != RecallJobResult.Interrupted)
                {
                    // Slots that passed while the job ran are not made up: the run just done covers them.
                    record.HandledUntilUtc = now;
                }
                JobStore.PutRecallJob(record);
            }
            var summary = $"Recall job '{record.Name}' {result.ToString().ToLowerInvariant()}: {record.LastFiles} files ({ByteSize.Format(record.LastBytes)}) recalled, {record.LastFailures} failed.";
            Record(result is RecallJobResult.Succeeded or RecallJobResult.Interrupted ? DriveEventKind.Recall : DriveEventKind.Error, null,
                firstError is null ? summary : $"{summary} First failure: {firstError}",
                result is RecallJobResult.Succeeded or RecallJobResult.Interrupted ? null : firstErrorId ?? ErrorIds.StoreError);
        }
    }

    private ScheduledJob? NextDueJob(DateTimeOffset now) => CurrentJobs()
        .Select(j => (Job: j, Next: j.Schedule.NextUtcAfter(j.Record.HandledUntilUtc, j.Zone)))
        .Where(x => x.Next <= now)
        .OrderBy(x => x.Next)
        .ThenBy(x => x.Job.Record.Name, StringComparer.OrdinalIgnoreCase)
        .Select(x => x.Job)
        .FirstOrDefault();

    /// <summary>The jobs in force (caller holds <see cref="_jobGate"/>): the policy's, then the registered ones whose names the policy does not take.</summary>
    private List<ScheduledJob> CurrentJobs()
    {
        var jobs = new List<ScheduledJob>();
        var now = clock.UtcNow;
        var policyNames = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var policy = drive.Policy().Policy;
        foreach (var declared in policy.RecallJobs)
        {
            var name = declared.Name.Value;
            policyNames.Add(name);
            var paths = declared.Paths.Select(p => p.Pattern).ToArray();
            if (!Jobs.TryGetValue(name, out var record) || record.Source != RecallJobSource.Policy
                || !record.Paths.SequenceEqual(paths) || record.Schedule != declared.Schedule.Value.Expression || record.TimeZone != declared.TimeZone?.Value)
            {
                // First seen (or changed in the policy): its first run is its first slot from now; history stays.
                var isNew = record is null || record.Source != RecallJobSource.Policy;
                record ??= new RecallJobRecord { Name = name };
                record.Name = name;
                record.Source = RecallJobSource.Policy;
                record.Paths = paths;
                record.Recurse = false;
                record.Schedule = declared.Schedule.Value.Expression;
                record.TimeZone = declared.TimeZone?.Value;
                record.ThrottleLimit = policy.RestoreThreads.Value;
                if (isNew)
                {
                    record.RegisteredUtc = now;
                    record.HandledUntilUtc = now;
                }
                JobStore.PutRecallJob(record);
                Jobs[name] = record;
            }
            var globs = declared.Paths.Select(p => p.Glob).ToList();
            jobs.Add(new ScheduledJob(record, declared.Schedule.Value, ResolveZoneOrLocal(record.TimeZone), declared.Origin.ToString(), path => globs.Any(g => g.AppliesTo(path))));
        }
        foreach (var record in Jobs.Values.Where(r => r.Source == RecallJobSource.Registered && !policyNames.Contains(r.Name)))
        {
            if (!CronSchedule.TryParse(record.Schedule, out var schedule, out _))
            {
                continue;
            }
            var queries = record.Paths.SelectMany(p => record.Recurse ? new[] { new FileQuery(p), new FileQuery(p + "/**") } : [new FileQuery(p)]).ToList();
            jobs.Add(new ScheduledJob(record, schedule, ResolveZoneOrLocal(record.TimeZone), null, path => queries.Any(q => q.Matches(path))));
        }
        return jobs;
    }

    /// <summary>Jobs as last stored, loaded once; a run the service did not finish (killed) is marked Interrupted.</summary>
    private Dictionary<string, RecallJobRecord> Jobs
    {
        get
        {
            if (_jobs is not null)
            {
                return _jobs;
            }
            _jobs = new Dictionary<string, RecallJobRecord>(StringComparer.OrdinalIgnoreCase);
            foreach (var record in JobStore.ReadRecallJobs())
            {
                if (record.LastResult == RecallJobResult.Running)
                {
                    record.LastResult = RecallJobResult.Interrupted;
                    record.LastMessage = "The service stopped during the run; it runs again at this start.";
                    JobStore.PutRecallJob(record);
                }
                _jobs[record.Name] = record;
            }
            return _jobs;
        }
    }

    private static CronSchedule ParseSchedule(string expression) =>
        CronSchedule.TryParse(expression ?? "", out var schedule, out var error)
            ? schedule
            : throw new GeoDriveException(ErrorIds.InvalidCron, ErrorKind.InvalidArgument,
                $"The schedule '{expression}' is not a valid cron expression: {error}.",
                "Write five fields in quotes, minute hour day-of-month month day-of-week (e.g. '0 6 * * 1-5' for 06:00 on weekdays), or @hourly/@daily/@weekly/@monthly.");

    private TimeZoneInfo ResolveZone(string? id)
    {
        if (id is null)
        {
            return drive.TimeZone ?? TimeZoneInfo.Local;
        }
        try
        {
            return TimeZoneInfo.FindSystemTimeZoneById(id);
        }
        catch (Exception ex) when (ex is TimeZoneNotFoundException or InvalidTimeZoneException)
        {
            throw new GeoDriveException(ErrorIds.InvalidRequest, ErrorKind.InvalidArgument,
                $"'{id}' is not a time zone this machine knows.", "Give an IANA id such as 'Europe/Berlin' or 'UTC' (on Windows also a Windows id such as 'W. Europe Standard Time'), or leave it out for the service's local time.");
        }
    }

    // A stored zone that no longer resolves (tzdata changed) falls back to local time rather than stopping the job.
    private TimeZoneInfo ResolveZoneOrLocal(string? id)
    {
        try
        {
            return ResolveZone(id);
        }
        catch (GeoDriveException)
        {
            return drive.TimeZone ?? TimeZoneInfo.Local;
        }
    }

    private sealed record ScheduledJob(RecallJobRecord Record, CronSchedule Schedule, TimeZoneInfo Zone, string? DeclaredAt, Func<string, bool> Selects);

    [GeneratedRegex("^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    private static partial Regex JobNameRegex();
}
