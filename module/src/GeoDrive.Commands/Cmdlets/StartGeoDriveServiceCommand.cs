using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>Starts the GeoDrive service in the background and waits until its control API answers.</summary>
[Cmdlet(VerbsLifecycle.Start, "GeoDriveService", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Low)]
[OutputType(typeof(ServiceInfo))]
public sealed class StartGeoDriveServiceCommand : GeoDriveCmdlet
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    #region Parameters

    /// <summary>The service executable (or GeoDrive.Service.dll, run with dotnet).</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string? ServicePath { get; set; }

    /// <summary>Where the service keeps drive definitions, credentials and its log (its --home).</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string? StatePath { get; set; }

    /// <summary>The control socket, or on Windows a pipe (\\.\pipe\NAME). When given, GEODRIVE_SOCKET is set so this session's cmdlets use it.</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public string? SocketPath { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        // A pipe address (\\.\pipe\NAME, Windows) is a name, not a path to resolve.
        var socketPath = SocketPath is null ? ApiRoutes.DefaultSocketPath
            : ControlEndpoint.Parse(SocketPath).IsPipe ? SocketPath : ResolveLocalPath(SocketPath);
        var statePath = StatePath is null ? ApiRoutes.DefaultHomePath : ResolveLocalPath(StatePath);
        var binary = ServicePath is not null ? ResolveLocalPath(ServicePath)
            : Environment.GetEnvironmentVariable("GEODRIVE_SERVICE_PATH") is { Length: > 0 } fromEnv ? fromEnv
            : ServiceProcess.DefaultBinary;

        using var probe = new GeoDriveClient(socketPath, TimeSpan.FromSeconds(5));
        if (TryGetService(probe) is { } running)
        {
            WriteWarning(Messages.ServiceAlreadyRunning(socketPath, running.ProcessId));
            UseSocket(socketPath);
            WriteObject(running);
            return;
        }
        // Windows, service installed (docs/windows.md): the SCM starts it, as LocalSystem, with its own arguments.
        if (OperatingSystem.IsWindows() && ServicePath is null && StatePath is null && SocketPath is null && StartThroughScm(probe, socketPath))
        {
            return;
        }
        // Linux under systemd, unit installed (docs/linux-service.md): systemd starts it, with the unit's socket, home and hardening.
        if (!OperatingSystem.IsWindows() && ServicePath is null && StatePath is null
            && socketPath == SystemdServiceControl.Current.SocketPath && StartThroughSystemd(probe, socketPath))
        {
            return;
        }
        if (!File.Exists(binary))
        {
            ThrowTerminatingError(NewError(ModuleErrorIds.ServiceBinaryNotFound, ErrorKind.ObjectNotFound,
                Messages.ServiceBinaryNotFound(binary), Messages.ServiceBinaryNotFoundRemedy, binary));
        }
        if (!ShouldProcess($"{binary} --socket {socketPath} --home {statePath}", "Start GeoDrive service"))
        {
            return;
        }

        Directory.CreateDirectory(statePath);
        if (!ControlEndpoint.Parse(socketPath).IsPipe && Path.GetDirectoryName(socketPath) is { Length: > 0 } socketFolder)
        {
            Directory.CreateDirectory(socketFolder);
        }
        var logPath = Path.Combine(statePath, "service.log");
        var processId = ServiceProcess.StartDetached(binary, socketPath, statePath, logPath);
        WriteVerbose($"Started {binary} as process {processId}; log {logPath}.");

        var progress = new ProgressRecord(1, "Start-GeoDriveService", $"Waiting for the service on {socketPath}");
        var deadline = DateTime.UtcNow + StartTimeout;
        while (true)
        {
            if (TryGetService(probe) is { } info)
            {
                progress.RecordType = ProgressRecordType.Completed;
                WriteProgress(progress);
                UseSocket(socketPath);
                WriteObject(info);
                return;
            }
            if (!ServiceProcess.IsAlive(processId))
            {
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.InvalidOperation,
                    Messages.ServiceExited(processId, logPath), Messages.ServiceStartRemedy, binary));
            }
            if (DateTime.UtcNow > deadline)
            {
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.ResourceUnavailable,
                    Messages.ServiceStartTimeout(socketPath, (int)StartTimeout.TotalSeconds, logPath), Messages.ServiceStartRemedy, binary));
            }
            WriteProgress(progress);
            Cancellation.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(200));
            if (Cancellation.IsCancellationRequested)
            {
                throw new PipelineStoppedException();
            }
        }
    }

    /// <summary>False when the service is not installed (then the binary is started as on Linux).</summary>
    private bool StartThroughScm(GeoDriveClient probe, string socketPath)
    {
        if (!WindowsServiceControl.IsInstalled())
        {
            return false;
        }
        if (!ShouldProcess($"Windows service '{WindowsServiceControl.ServiceName}'", "Start"))
        {
            return true;
        }
        var (outcome, output) = WindowsServiceControl.Start();
        switch (outcome)
        {
            case ScmOutcome.NotInstalled:
                return false;
            case ScmOutcome.AccessDenied:
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.PermissionDenied,
                    Messages.ServiceScmRefused(output.Trim()), Messages.ServiceScmRemedy, WindowsServiceControl.ServiceName));
                break;
            case ScmOutcome.Failed:
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.InvalidOperation,
                    Messages.ServiceScmRefused(output.Trim()), Messages.ServiceScmRemedy, WindowsServiceControl.ServiceName));
                break;
        }
        WaitForManagedService(probe, socketPath, "the Windows service", "the Application event log (source GeoDrive)", Messages.ServiceScmRemedy, WindowsServiceControl.ServiceName);
        return true;
    }

    /// <summary>False when the unit is not installed or systemd does not run the machine (then the binary is started as before).</summary>
    private bool StartThroughSystemd(GeoDriveClient probe, string socketPath)
    {
        var systemd = SystemdServiceControl.Current;
        if (!systemd.IsInstalled())
        {
            return false;
        }
        if (!ShouldProcess($"systemd unit '{SystemdServiceControl.UnitName}'", "Start"))
        {
            return true;
        }
        WriteVerbose($"Starting the systemd unit {SystemdServiceControl.UnitName} ({systemd.Systemctl} start).");
        var (outcome, output) = systemd.Start();
        switch (outcome)
        {
            case SystemdOutcome.NotInstalled:
                return false;
            case SystemdOutcome.AccessDenied:
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.PermissionDenied,
                    Messages.ServiceSystemdRefused("start", output), Messages.ServiceSystemdRemedy, SystemdServiceControl.UnitName));
                break;
            case SystemdOutcome.Failed:
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.InvalidOperation,
                    Messages.ServiceSystemdRefused("start", output), Messages.ServiceSystemdRemedy, SystemdServiceControl.UnitName));
                break;
        }
        WaitForManagedService(probe, socketPath, "the systemd unit", "'journalctl -u geodrive'", Messages.ServiceSystemdRemedy, SystemdServiceControl.UnitName);
        return true;
    }

    /// <summary>After the SCM or systemd accepted the start: waits until the control API answers and writes the service.</summary>
    private void WaitForManagedService(GeoDriveClient probe, string socketPath, string what, string whereLogs, string remedy, string target)
    {
        var deadline = DateTime.UtcNow + StartTimeout;
        var progress = new ProgressRecord(1, "Start-GeoDriveService", $"Waiting for {what} on {socketPath}");
        ServiceInfo? info;
        while ((info = TryGetService(probe)) is null)
        {
            if (DateTime.UtcNow > deadline)
            {
                ThrowTerminatingError(NewError(ModuleErrorIds.ServiceStartFailed, ErrorKind.ResourceUnavailable,
                    Messages.ServiceStartTimeout(socketPath, (int)StartTimeout.TotalSeconds, whereLogs), remedy, target));
            }
            WriteProgress(progress);
            if (Cancellation.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(200)))
            {
                throw new PipelineStoppedException();
            }
        }
        progress.RecordType = ProgressRecordType.Completed;
        WriteProgress(progress);
        UseSocket(socketPath);
        WriteObject(info);
    }

    private ServiceInfo? TryGetService(GeoDriveClient client)
    {
        try
        {
            return client.GetServiceAsync(Cancellation).GetAwaiter().GetResult();
        }
        catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ServiceNotRunning)
        {
            return null;
        }
        catch (OperationCanceledException) when (Cancellation.IsCancellationRequested)
        {
            throw new PipelineStoppedException();
        }
        catch (GeoDriveException ex)
        {
            ThrowTerminatingError(ToErrorRecord(ex, client.SocketPath));
            return null;
        }
    }

    private void UseSocket(string socketPath)
    {
        if (SocketPath is not null)
        {
            Environment.SetEnvironmentVariable(ApiRoutes.SocketEnvironmentVariable, socketPath);
        }
    }
}
