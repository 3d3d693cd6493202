using GeoDrive.Api;
using GeoDrive.Service.Hosting;

namespace GeoDrive.Service.Tests;

public sealed class ControlEndpointTests
{
    [Fact]
    public void The_default_is_the_socket_on_Linux_and_the_pipe_geodrive_on_Windows()
    {
        Assert.Equal("/run/geodrive/geodrive.sock", ControlEndpoint.DefaultAddress(windows: false));
        Assert.Equal(@"\\.\pipe\geodrive", ControlEndpoint.DefaultAddress(windows: true));

        var pipe = ControlEndpoint.Parse(ControlEndpoint.DefaultAddress(windows: true), windows: true);
        Assert.Equal(ControlTransport.NamedPipe, pipe.Transport);
        Assert.Equal("geodrive", pipe.Name);
    }

    [Fact]
    public void A_pipe_address_is_a_pipe_only_on_Windows()
    {
        Assert.True(ControlEndpoint.Parse(@"\\.\PIPE\geodrive-test", windows: true).IsPipe);
        Assert.Equal("geodrive-test", ControlEndpoint.Parse(@"\\.\PIPE\geodrive-test", windows: true).Name);
        // Linux keeps its behaviour: every address is a socket path.
        Assert.Equal(ControlTransport.UnixSocket, ControlEndpoint.Parse(@"\\.\pipe\geodrive", windows: false).Transport);
    }

    [Fact]
    public void A_socket_path_stays_a_socket_on_Windows_too()
    {
        var socket = ControlEndpoint.Parse(@"C:\Temp\geodrive.sock", windows: true);
        Assert.Equal(ControlTransport.UnixSocket, socket.Transport);
        Assert.Equal(@"C:\Temp\geodrive.sock", socket.Name);
        Assert.Equal(ControlTransport.UnixSocket, ControlEndpoint.Parse("/tmp/x/geodrive.sock", windows: false).Transport);
    }

    [Theory]
    [InlineData(@"\\.\pipe\")]
    [InlineData(@"\\.\pipe\a\b")]
    public void A_pipe_address_without_a_plain_name_is_refused(string address) =>
        Assert.Throws<ArgumentException>(() => ControlEndpoint.Parse(address, windows: true));

    [Fact]
    public void The_service_makes_a_socket_path_absolute_and_leaves_a_pipe_address_alone()
    {
        Assert.Equal(Path.GetFullPath("x.sock"), ServiceOptions.FullAddress("x.sock"));
        var options = ServiceOptions.FromArgs(["--socket", "rel/geodrive.sock", "--home", "home"]);
        Assert.True(Path.IsPathFullyQualified(options.SocketPath));
        Assert.False(options.Endpoint.IsPipe);
        if (OperatingSystem.IsWindows())
        {
            Assert.Equal(@"\\.\pipe\gd", ServiceOptions.FullAddress(@"\\.\pipe\gd"));
        }
    }

    [Fact]
    public async Task A_client_names_the_address_it_could_not_reach()
    {
        var missing = Path.Combine(Path.GetTempPath(), $"geodrive-none-{Guid.NewGuid():N}.sock");
        using var client = new GeoDriveClient(missing, TimeSpan.FromSeconds(5));
        Assert.False(client.Endpoint.IsPipe);
        var error = await Assert.ThrowsAsync<GeoDrive.Core.Errors.GeoDriveException>(() => client.GetServiceAsync());
        Assert.Equal(GeoDrive.Core.Errors.ErrorIds.ServiceNotRunning, error.ErrorId);
        Assert.Contains(missing, error.Message, StringComparison.Ordinal);
    }
}
