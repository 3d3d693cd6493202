namespace GeoDrive.Api;

/// <summary>How the control API is reached: a Unix domain socket (Linux) or a named pipe (Windows).</summary>
public enum ControlTransport
{
    UnixSocket,
    NamedPipe,
}

/// <summary>
/// Where the control API listens, parsed from the one address string the service, the module and
/// GEODRIVE_SOCKET share. On Windows an address <c>\\.\pipe\NAME</c> is the named pipe NAME (the
/// default, <c>\\.\pipe\geodrive</c>); any other address is a Unix domain socket path, on every OS, so
/// a test or a side-by-side service can still use a socket file. Linux never has pipes here.
/// </summary>
public sealed record ControlEndpoint(ControlTransport Transport, string Address)
{
    public const string PipePrefix = @"\\.\pipe\";

    /// <summary>The service's pipe name on Windows.</summary>
    public const string DefaultPipeName = "geodrive";

    public const string DefaultUnixSocketPath = "/run/geodrive/geodrive.sock";

    /// <summary>For a pipe: the name without <c>\\.\pipe\</c> (what NamedPipe*Stream takes); for a socket: the path.</summary>
    public string Name => Transport == ControlTransport.NamedPipe ? Address[PipePrefix.Length..] : Address;

    public bool IsPipe => Transport == ControlTransport.NamedPipe;

    /// <summary>The default address on this kind of OS.</summary>
    public static string DefaultAddress(bool windows) => windows ? PipePrefix + DefaultPipeName : DefaultUnixSocketPath;

    public static ControlEndpoint Parse(string address) => Parse(address, OperatingSystem.IsWindows());

    public static ControlEndpoint Parse(string address, bool windows)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(address);
        if (windows && address.StartsWith(PipePrefix, StringComparison.OrdinalIgnoreCase))
        {
            var name = address[PipePrefix.Length..];
            if (name.Length == 0 || name.Contains('\\', StringComparison.Ordinal))
            {
                throw new ArgumentException($"'{address}' is not a local pipe address; give \\\\.\\pipe\\NAME.", nameof(address));
            }
            return new ControlEndpoint(ControlTransport.NamedPipe, PipePrefix + name);
        }
        return new ControlEndpoint(ControlTransport.UnixSocket, address);
    }

    public override string ToString() => Address;
}
