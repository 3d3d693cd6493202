using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>Stops the GeoDrive service: it dismounts every drive cleanly and exits. Cached data is kept.</summary>
[Cmdlet(VerbsLifecycle.Stop, "GeoDriveService", SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(void))]
public sealed class StopGeoDriveServiceCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>How long to wait for the service to dismount its drives and exit.</summary>
    [Parameter]
    [ValidateRange(1, 3600)]
    public int TimeoutSeconds { get; set; } = 40;

    #endregion

    protected override void ProcessRecord()
    {
        Try(ApiRoutes.DefaultSocketPath, () =>
        {
            var info = Call((c, ct) => c.GetServiceAsync(ct));
            // The systemd unit's own process is stopped through systemd (docs/linux-service.md), which would
            // otherwise restart it (Restart=on-failure) or record it as failed.
            var systemd = OperatingSystem.IsWindows() ? null : SystemdServiceControl.Current;
            var viaSystemd = systemd?.Query() is { Installed: true, MainProcessId: { } mainPid } && mainPid == info.ProcessId;
            var how = viaSystemd ? $", systemd unit {SystemdServiceControl.UnitName}" : "";
            if (!ShouldProcess($"GeoDrive service (process {info.ProcessId}, socket {info.SocketPath}, {info.DriveCount} drives{how})", "Stop"))
            {
                return;
            }
            if (viaSystemd)
            {
                WriteVerbose($"Stopping the systemd unit {SystemdServiceControl.UnitName} ({systemd!.Systemctl} stop).");
                var (outcome, output) = systemd.Stop();
                if (outcome != SystemdOutcome.Done)
                {
                    throw new GeoDriveException(ModuleErrorIds.ServiceStopFailed,
                        outcome == SystemdOutcome.AccessDenied ? ErrorKind.PermissionDenied : ErrorKind.InvalidOperation,
                        Messages.ServiceSystemdRefused("stop", output), Messages.ServiceSystemdRemedy);
                }
            }
            else
            {
                ServiceProcess.Terminate(info.ProcessId);
            }
            var deadline = DateTime.UtcNow.AddSeconds(TimeoutSeconds);
            var progress = new ProgressRecord(1, "Stop-GeoDriveService", $"Waiting for process {info.ProcessId} to dismount its drives and exit");
            while (ServiceProcess.IsAlive(info.ProcessId))
            {
                if (DateTime.UtcNow > deadline)
                {
                    throw new GeoDriveException(ModuleErrorIds.ServiceStopFailed, ErrorKind.ResourceUnavailable,
                        Messages.ServiceStopTimeout(info.ProcessId, TimeoutSeconds), Messages.ServiceStopRemedy);
                }
                WriteProgress(progress);
                if (Cancellation.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(200)))
                {
                    throw new PipelineStoppedException();
                }
            }
            progress.RecordType = ProgressRecordType.Completed;
            WriteProgress(progress);
        });
    }
}
