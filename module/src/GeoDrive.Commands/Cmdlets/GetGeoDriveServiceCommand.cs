using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Errors;

namespace GeoDrive.Commands;

/// <summary>Shows the running GeoDrive service: version, process, socket, state folder, drive count.</summary>
[Cmdlet(VerbsCommon.Get, "GeoDriveService")]
[OutputType(typeof(ServiceInfo))]
public sealed class GetGeoDriveServiceCommand : GeoDriveCmdlet
{
    protected override void ProcessRecord()
    {
        try
        {
            WriteObject(Call((c, ct) => c.GetServiceAsync(ct)));
        }
        catch (GeoDriveException ex)
        {
            // "Not running" is this cmdlet's answer, not a failure to go on: non-terminating, so
            // `Get-GeoDriveService -ErrorAction SilentlyContinue` works as a quiet test.
            WriteError(ToErrorRecord(ex, Client.SocketPath));
        }
    }
}
