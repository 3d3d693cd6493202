using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// Who may use the control socket, asked of the kernel (SO_PEERCRED) on every request: the real service, and
/// a real unprivileged user (nobody) who gets past the socket file's mode (it is loosened by hand, as a
/// careless chmod or a wrong umask in a wrapper would).
/// </summary>
[Collection(EndToEndCollection.Name)]
[System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
public sealed class ControlSocketAccessTests : IAsyncLifetime
{
    private readonly ServiceProcess _service = new();

    public Task InitializeAsync() => Task.CompletedTask;

    public Task DisposeAsync() => _service.DisposeAsync().AsTask();

    /// <summary>GET /v1/drives as nobody; returns curl's "status body" (curl exits 0 on any HTTP answer).</summary>
    private string AsNobody()
    {
        // nobody needs to reach the socket: its folders are opened up for the test.
        File.SetUnixFileMode(_service.Root, (UnixFileMode)0b111_101_101);
        File.SetUnixFileMode(_service.SocketPath, (UnixFileMode)0b110_110_110);
        var (exitCode, output) = Unprivileged.Run("curl", "-s", "-w", " %{http_code}", "--unix-socket", _service.SocketPath, "http://geodrive/v1/drives");
        Assert.True(exitCode == 0, $"curl as nobody failed ({exitCode}): {output}");
        return output;
    }

    [Fact]
    public async Task The_socket_is_owner_only_and_a_local_user_who_gets_past_its_mode_is_refused_with_an_id_and_a_remedy()
    {
        await _service.StartAsync();
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(_service.SocketPath));

        var answer = AsNobody();

        Assert.EndsWith(" 403", answer, StringComparison.Ordinal);
        Assert.Contains("ServiceAccessDenied", answer, StringComparison.Ordinal);
        Assert.Contains("--admin-group", answer, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_member_of_the_administrators_group_named_at_start_may_use_the_service()
    {
        _service.ExtraArguments = ["--admin-group", "nogroup"];
        await _service.StartAsync();

        var answer = AsNobody();

        Assert.EndsWith(" 200", answer, StringComparison.Ordinal);
    }
}
