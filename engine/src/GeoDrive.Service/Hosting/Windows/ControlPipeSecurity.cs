using System.IO.Pipes;
using System.Runtime.Versioning;
using System.Security.AccessControl;
using System.Security.Principal;
using GeoDrive.Api;
using Microsoft.AspNetCore.Server.Kestrel.Transport.NamedPipes;

namespace GeoDrive.Service.Hosting.Windows;

/// <summary>The control pipe's security on Windows, built from <see cref="ControlPipeAccess.Entries"/> (tested as data on every OS).</summary>
[SupportedOSPlatform("windows")]
public static class ControlPipeSecurity
{
    private static int _created;

    /// <summary>Kestrel on the pipe, each instance created with <see cref="Build"/>'s ACL.</summary>
    public static void Listen(WebApplicationBuilder builder, string pipeName)
    {
        builder.WebHost.UseNamedPipes(o =>
        {
            // The ACL replaces "current user only": the service runs as SYSTEM, its clients are administrators.
            o.CurrentUserOnly = false;
            o.CreateNamedPipeServerStream = CreateServerStream;
        });
        builder.WebHost.ConfigureKestrel(k => k.ListenNamedPipe(pipeName));
    }

    public static PipeSecurity Build()
    {
        using var me = WindowsIdentity.GetCurrent();
        var security = new PipeSecurity();
        // Protected: nothing inherited from the pipe file system's defaults (which admit Everyone to read).
        security.SetAccessRuleProtection(isProtected: true, preserveInheritance: false);
        foreach (var entry in ControlPipeAccess.Entries(me.User?.Value))
        {
            security.AddAccessRule(new PipeAccessRule(new SecurityIdentifier(entry.Sid), (PipeAccessRights)entry.Rights,
                entry.Allow ? AccessControlType.Allow : AccessControlType.Deny));
        }
        return security;
    }

    /// <summary>
    /// Kestrel's factory for each pipe instance. The first instance is created with
    /// FirstPipeInstance: if anyone already holds the name, the service fails to start rather than
    /// share it with a stranger.
    /// </summary>
    public static NamedPipeServerStream CreateServerStream(CreateNamedPipeServerStreamContext context)
    {
        var options = context.PipeOptions;
        if (Interlocked.Exchange(ref _created, 1) == 0)
        {
            options |= PipeOptions.FirstPipeInstance;
        }
        return NamedPipeServerStreamAcl.Create(context.NamedPipeEndPoint.PipeName, PipeDirection.InOut,
            NamedPipeServerStream.MaxAllowedServerInstances, PipeTransmissionMode.Byte, options,
            inBufferSize: 0, outBufferSize: 0, Build());
    }
}
