using System.IO.Pipes;
using System.Net.Sockets;
using GeoDrive.Api;
using GeoDrive.Service.Hosting.Windows;

namespace GeoDrive.Service.Hosting;

/// <summary>
/// Where the control API listens: a Unix domain socket that only root may open (Linux; any socket
/// address), or on Windows a named pipe whose ACL admits SYSTEM and Administrators only. One
/// service per address.
/// </summary>
public static class ControlListener
{
    /// <summary>Whether a service already answers at the address (a second one would steal or fail on it).</summary>
    public static bool IsServed(ControlEndpoint endpoint)
    {
        if (endpoint.IsPipe)
        {
            using var pipe = new NamedPipeClientStream(".", endpoint.Name, PipeDirection.InOut, PipeOptions.None, System.Security.Principal.TokenImpersonationLevel.Identification);
            try
            {
                pipe.Connect(200);
                return true;
            }
            catch (Exception ex) when (ex is TimeoutException or IOException)
            {
                return false;
            }
            catch (UnauthorizedAccessException)
            {
                // Someone holds the name and would not let us in: it is taken either way.
                return true;
            }
        }
        if (!File.Exists(endpoint.Address))
        {
            return false;
        }
        using var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            socket.Connect(new UnixDomainSocketEndPoint(endpoint.Address));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Binds Kestrel to the address. A socket file left by a killed service is removed first.</summary>
    public static void Listen(WebApplicationBuilder builder, ControlEndpoint endpoint)
    {
        if (endpoint.IsPipe && OperatingSystem.IsWindows())
        {
            ControlPipeSecurity.Listen(builder, endpoint.Name);
            return;
        }
        Directory.CreateDirectory(Path.GetDirectoryName(endpoint.Address)!);
        File.Delete(endpoint.Address);
        var handle = BindOwnerOnly(endpoint.Address);
        builder.WebHost.ConfigureKestrel(k => k.ListenHandle(handle));
    }

    /// <summary>Removes the socket file when the service stops (a pipe goes with its last handle).</summary>
    public static void Remove(ControlEndpoint endpoint)
    {
        if (!endpoint.IsPipe)
        {
            File.Delete(endpoint.Address);
        }
    }

    /// <summary>
    /// Binds the socket, makes its file 0600, and only then listens: a bound socket that does not listen refuses
    /// every connection, so there is no moment at which another user could connect (whatever the umask). Returns
    /// the listening socket's descriptor, which Kestrel takes over.
    /// </summary>
    public static ulong BindOwnerOnly(string address)
    {
        var socket = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            socket.Bind(new UnixDomainSocketEndPoint(address));
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(address, UnixFileMode.UserRead | UnixFileMode.UserWrite);
            }
            socket.Listen(512);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
        var handle = (ulong)socket.SafeHandle.DangerousGetHandle();
        // Kestrel owns the descriptor from here (it closes it at shutdown); this wrapper must never close it too.
        socket.SafeHandle.SetHandleAsInvalid();
        GC.SuppressFinalize(socket);
        return handle;
    }
}
