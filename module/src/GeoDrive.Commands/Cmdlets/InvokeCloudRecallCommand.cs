using System.Diagnostics;
using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>What one Invoke-CloudRecall run did.</summary>
public sealed class CloudRecallResult
{
    public required string Drive { get; init; }
    public int Files { get; init; }
    public long Bytes { get; init; }
    public int Failures { get; init; }
    public double Seconds { get; init; }
    public string[] FailedPaths { get; init; } = [];
}

/// <summary>
/// Brings stubbed files back into the cache now (pre-warming), <see cref="ThrottleLimit"/> at a time,
/// with progress and a summary. Files that are not stubs are left alone; Ctrl+C stops it cleanly
/// (a file cut off mid-recall stays a stub). With -Recurse a folder is synced with the bucket first, so
/// files in folders nobody has listed yet are recalled too.
/// </summary>
[Cmdlet(VerbsLifecycle.Invoke, "CloudRecall", DefaultParameterSetName = PathSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Low)]
[OutputType(typeof(CloudRecallResult))]
public sealed class InvokeCloudRecallCommand : DrivePathCmdlet
{
    #region Parameters

    /// <summary>A folder path recalls everything under it.</summary>
    [Parameter]
    public SwitchParameter Recurse { get; set; }

    /// <summary>Files recalled at once.</summary>
    [Parameter]
    [ValidateRange(1, 256)]
    public int ThrottleLimit { get; set; } = 8;

    #endregion

    protected override void ProcessRecord()
    {
        var literal = IsLiteral;
        var patterns = GivenPaths;
        Try(Drive, () =>
        {
            if (Recurse)
            {
                SyncFolders(patterns, literal);
            }
            var stubs = FindStubs(patterns, literal);
            if (stubs.Count == 0)
            {
                WriteVerbose($"No stubbed file matches {string.Join(", ", patterns)} on drive {Drive}.");
                WriteObject(new CloudRecallResult { Drive = Drive });
                return;
            }
            if (!ShouldProcess($"{stubs.Count} stubbed files ({Core.Model.ByteSize.Format(stubs.Sum(f => f.Size))}) matching {string.Join(", ", patterns)} on drive {Drive}", "Recall"))
            {
                return;
            }
            WriteObject(Recall(stubs));
        });
    }

    /// <summary>
    /// Each folder named without wildcards is synced with the bucket first, so files in folders never listed
    /// are stubs to recall too. A path the service says is no folder is a file: the folders above it were
    /// synced on the way, so it is there to be recalled as named.
    /// </summary>
    private void SyncFolders(string[] patterns, bool literal)
    {
        var folders = patterns
            .Where(p => literal || !Wildcards.IsPattern(p))
            .Select(p => p.Replace('\\', '/').Trim('/'))
            .Distinct(StringComparer.Ordinal);
        foreach (var folder in folders)
        {
            if (!ShouldProcess(Messages.SyncTarget(folder, Drive), Messages.SyncAction))
            {
                continue;
            }
            try
            {
                var synced = SyncWithProgress(Drive, folder);
                WriteVerbose($"Synced {Messages.SyncTarget(folder, Drive)}: {Messages.SyncStatus(synced.Folders, synced.StubsMade, synced.FoldersMade)}.");
            }
            catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.FileNotFound)
            {
                // A file, not a folder.
            }
        }
    }

    /// <summary>The stubs among the files the patterns name; with -Recurse a folder path names everything under it.</summary>
    private List<CloudFileInfo> FindStubs(string[] patterns, bool literal)
    {
        var found = new Dictionary<string, CloudFileInfo>(StringComparer.Ordinal);
        foreach (var pattern in patterns)
        {
            var normalized = pattern.Replace('\\', '/').Trim('/');
            var queries = Recurse ? new[] { normalized, normalized + "/**" } : [normalized];
            foreach (var query in queries)
            {
                foreach (var file in Call((c, ct) => c.GetFilesAsync(Drive, query, ct)))
                {
                    // A literal path names that file (or, with -Recurse, that folder) and nothing a glob would add.
                    var named = !literal || file.Path == normalized || (Recurse && file.Path.StartsWith(normalized + "/", StringComparison.Ordinal));
                    if (named && file.State == "Stubbed")
                    {
                        found[file.Path] = file;
                    }
                }
            }
        }
        return [.. found.Values.OrderBy(f => f.Path, StringComparer.Ordinal)];
    }

    private CloudRecallResult Recall(List<CloudFileInfo> stubs)
    {
        var clock = Stopwatch.StartNew();
        var total = stubs.Count;
        var totalBytes = stubs.Sum(f => f.Size);
        using var slots = new SemaphoreSlim(ThrottleLimit);
        var pending = stubs.Select(file => RecallOneAsync(file, slots)).ToList();
        var done = 0;
        long bytes = 0;
        var failed = new List<string>();
        var progress = new ProgressRecord(1, $"Recalling from drive {Drive}", $"0 of {total} files");

        // Results are taken on the pipeline thread as they come, so progress and errors are written there.
        while (pending.Count > 0)
        {
            int index;
            try
            {
                index = Task.WaitAny([.. pending], Cancellation);
            }
            catch (OperationCanceledException)
            {
                throw new PipelineStoppedException();
            }
            var (file, result) = pending[index].GetAwaiter().GetResult();
            pending.RemoveAt(index);
            done++;
            if (result is { Succeeded: true })
            {
                bytes += file.Size;
            }
            else
            {
                failed.Add(file.Path);
                var id = result?.ErrorId is { Length: > 0 } e ? e : ErrorIds.StoreError;
                WriteError(NewError(id, ErrorKind.ResourceUnavailable, Messages.FileActionFailed("Recall", file.Path, Drive, result?.Message ?? "the service did not answer"), "", file));
            }
            progress.StatusDescription = $"{done} of {total} files, {Core.Model.ByteSize.Format(bytes)} of {Core.Model.ByteSize.Format(totalBytes)}";
            progress.PercentComplete = (int)(100L * done / total);
            WriteProgress(progress);
        }
        progress.RecordType = ProgressRecordType.Completed;
        WriteProgress(progress);
        return new CloudRecallResult
        {
            Drive = Drive,
            Files = total - failed.Count,
            Bytes = bytes,
            Failures = failed.Count,
            Seconds = Math.Round(clock.Elapsed.TotalSeconds, 3),
            FailedPaths = [.. failed],
        };
    }

    private async Task<(CloudFileInfo File, FileActionResult? Result)> RecallOneAsync(CloudFileInfo file, SemaphoreSlim slots)
    {
        await slots.WaitAsync(Cancellation);
        try
        {
            var results = await Client.RecallAsync(Drive, new FileActionRequest { Paths = [file.Path], Literal = true }, Cancellation);
            return (file, results.FirstOrDefault());
        }
        catch (GeoDriveException ex)
        {
            return (file, new FileActionResult { Drive = Drive, Path = file.Path, State = file.State, Succeeded = false, ErrorId = ex.ErrorId, Message = ex.FullMessage });
        }
        finally
        {
            slots.Release();
        }
    }
}
