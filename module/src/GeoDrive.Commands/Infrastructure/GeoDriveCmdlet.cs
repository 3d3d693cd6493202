using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>
/// What every GeoDrive cmdlet shares: one control-API client (created on first use, so -WhatIf sends
/// nothing), a cancellation source that Ctrl+C (StopProcessing) cancels, and the translation of
/// <see cref="GeoDriveException"/> into an <see cref="ErrorRecord"/> with a stable id.
/// </summary>
public abstract class GeoDriveCmdlet : PSCmdlet, IDisposable
{
    private readonly CancellationTokenSource _stopping = new();
    private GeoDriveClient? _client;

    /// <summary>The client on the socket from GEODRIVE_SOCKET (read now, so `$env:GEODRIVE_SOCKET = ...` applies).</summary>
    protected GeoDriveClient Client => _client ??= new GeoDriveClient();

    protected CancellationToken Cancellation => _stopping.Token;

    protected override void StopProcessing() => _stopping.Cancel();

    protected override void EndProcessing() => DisposeClient();

    public void Dispose()
    {
        DisposeClient();
        _stopping.Dispose();
        GC.SuppressFinalize(this);
    }

    /// <summary>Runs one control-API call on the pipeline thread; Ctrl+C cancels it.</summary>
    protected T Call<T>(Func<GeoDriveClient, CancellationToken, Task<T>> call)
    {
        try
        {
            return call(Client, Cancellation).GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (Cancellation.IsCancellationRequested)
        {
            throw new PipelineStoppedException();
        }
    }

    protected void Call(Func<GeoDriveClient, CancellationToken, Task> call) =>
        Call<bool>(async (client, ct) =>
        {
            await call(client, ct);
            return true;
        });

    /// <summary>
    /// Runs <paramref name="action"/>; a refusal about one item becomes a non-terminating error, but
    /// "the service is not there" stops the command: nothing after it could succeed either.
    /// </summary>
    protected void Try(object? target, Action action)
    {
        try
        {
            action();
        }
        catch (GeoDriveException ex) when (IsFatal(ex.ErrorId))
        {
            ThrowTerminatingError(ToErrorRecord(ex, target));
        }
        catch (GeoDriveException ex)
        {
            WriteError(ToErrorRecord(ex, target));
        }
    }

    /// <summary>An error with GeoDrive's id; PowerShell appends ",GeoDrive.Commands.&lt;Class&gt;".</summary>
    protected static ErrorRecord ToErrorRecord(GeoDriveException ex, object? target)
    {
        // The remedy belongs in the message that users (and $_.Exception.Message) see.
        var shown = new GeoDriveException(ex.ErrorId, ex.Kind, ex.FullMessage, "", ex);
        return new ErrorRecord(shown, ex.ErrorId, ToCategory(ex.Kind), target)
        {
            ErrorDetails = new ErrorDetails(ex.FullMessage) { RecommendedAction = ex.Remedy },
        };
    }

    protected static ErrorRecord NewError(string errorId, ErrorKind kind, string message, string remedy, object? target) =>
        ToErrorRecord(new GeoDriveException(errorId, kind, message, remedy), target);

    protected static ErrorCategory ToCategory(ErrorKind kind) =>
        Enum.TryParse<ErrorCategory>(kind.ToString(), out var category) ? category : ErrorCategory.NotSpecified;

    protected static bool IsFatal(string errorId) =>
        errorId is ErrorIds.ServiceNotRunning or ErrorIds.ServiceAccessDenied;

    /// <summary>
    /// ShouldProcess, then one more confirmation when this particular call is riskier than the
    /// cmdlet's declared ConfirmImpact (e.g. a wildcard that may stub a whole tree). -Force or
    /// -Confirm:$false skip the extra question; -WhatIf never reaches it.
    /// </summary>
    protected bool ShouldProcessAt(string target, string action, ConfirmImpact impact, ConfirmImpact declared, bool force)
    {
        if (!ShouldProcess(target, action))
        {
            return false;
        }
        if (impact <= declared || force || MyInvocation.BoundParameters.ContainsKey("Confirm"))
        {
            return true;
        }
        var preference = GetVariableValue("ConfirmPreference") is ConfirmImpact p ? p : ConfirmImpact.High;
        return impact < preference || ShouldContinue($"{action} on \"{target}\"?", Messages.ConfirmCaption);
    }

    /// <summary>
    /// -Force skips the ConfirmImpact=High question (not -WhatIf, and not an explicit -Confirm).
    /// </summary>
    protected bool ShouldProcessForced(string target, string action, bool force)
    {
        var whatIf = MyInvocation.BoundParameters.TryGetValue("WhatIf", out var w) && w is SwitchParameter { IsPresent: true }
            || GetVariableValue("WhatIfPreference") is SwitchParameter { IsPresent: true } or true;
        if (force && !whatIf && !MyInvocation.BoundParameters.ContainsKey("Confirm"))
        {
            return true;
        }
        return ShouldProcess(target, action);
    }

    /// <summary>
    /// Drive names as typed: a literal name is kept as is (the service says if it does not exist, so
    /// -WhatIf needs no service); a wildcard pattern is matched against the service's list.
    /// </summary>
    protected IEnumerable<string> ExpandDriveNames(IEnumerable<string> names)
    {
        DriveInfo[]? all = null;
        foreach (var name in names)
        {
            if (!Wildcards.IsPattern(name))
            {
                yield return name;
                continue;
            }
            all ??= Call((c, ct) => c.GetDrivesAsync(ct));
            var pattern = Wildcards.Name(name);
            foreach (var drive in all.Where(d => pattern.IsMatch(d.Name)))
            {
                yield return drive.Name;
            }
        }
    }

    /// <summary>
    /// Syncs the tree under <paramref name="path"/> (the whole drive when empty) with the bucket, with progress:
    /// the request runs on a task while the pipeline thread asks how far it got every half second and writes
    /// that. Ctrl+C cancels the request, and with it the sync.
    /// </summary>
    protected DriveSyncInfo SyncWithProgress(string drive, string path)
    {
        // The service answers once the whole tree is synced: on a large bucket that can outlast the client's usual timeout.
        using var patient = new GeoDriveClient(Client.SocketPath, Timeout.InfiniteTimeSpan);
        var sync = patient.SyncDriveAsync(drive, new SyncDriveRequest { Path = path }, Cancellation);
        var progress = new ProgressRecord(SyncActivityId, Messages.SyncActivity(drive), Messages.SyncStatus(0, 0, 0))
        {
            PercentComplete = -1,
            CurrentOperation = path.Length == 0 ? null : path,
        };
        try
        {
            WriteProgress(progress);
            while (Task.WaitAny([sync], SyncPollMilliseconds, Cancellation) < 0)
            {
                if (SyncSoFar(drive) is { Running: true } now)
                {
                    progress.StatusDescription = Messages.SyncStatus(now.Folders, now.StubsMade, now.FoldersMade);
                    WriteProgress(progress);
                }
            }
            return sync.GetAwaiter().GetResult();
        }
        catch (OperationCanceledException) when (Cancellation.IsCancellationRequested)
        {
            throw new PipelineStoppedException();
        }
        finally
        {
            progress.RecordType = ProgressRecordType.Completed;
            WriteProgress(progress);
        }
    }

    private const int SyncActivityId = 2;
    private const int SyncPollMilliseconds = 500;

    /// <summary>The sync's counts now; null when the service cannot say (the sync's own answer reports why).</summary>
    private DriveSyncInfo? SyncSoFar(string drive)
    {
        try
        {
            return Call((c, ct) => c.GetDriveSyncAsync(drive, ct));
        }
        catch (GeoDriveException)
        {
            return null;
        }
    }

    /// <summary>A user's path (relative to the current file-system location, or ~) made absolute.</summary>
    protected string ResolveLocalPath(string path)
    {
        if (path.StartsWith('~') || Path.IsPathRooted(path) || path.Contains("::", StringComparison.Ordinal))
        {
            return SessionState.Path.GetUnresolvedProviderPathFromPSPath(path);
        }
        return Path.GetFullPath(Path.Combine(SessionState.Path.CurrentFileSystemLocation.ProviderPath, path));
    }

    private void DisposeClient()
    {
        _client?.Dispose();
        _client = null;
    }
}
