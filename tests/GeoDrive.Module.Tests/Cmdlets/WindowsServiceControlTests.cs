namespace GeoDrive.Module.Tests;

/// <summary>
/// How Start-/Stop-GeoDriveService read sc.exe on Windows (the SCM itself runs only there): exit codes
/// and the process id of "sc.exe queryex", through the module's public type as a script would see it.
/// </summary>
public sealed class WindowsServiceControlTests(ModuleSession session) : CmdletTests(session)
{
    [Theory]
    [InlineData(0, "Done")]
    [InlineData(1056, "AlreadyRunning")]
    [InlineData(1060, "NotInstalled")]
    [InlineData(1062, "NotRunning")]
    [InlineData(5, "AccessDenied")]
    [InlineData(1053, "Failed")]
    public void An_sc_exit_code_is_read_as_the_SCMs_answer(int exitCode, string outcome) =>
        Assert.Equal(outcome, Session.Invoke($"[GeoDrive.Commands.WindowsServiceControl]::Interpret({exitCode}).ToString()").Single().ToString());

    [Fact]
    public void The_running_services_process_id_is_read_from_sc_queryex()
    {
        const string running = """

            SERVICE_NAME: GeoDrive
                    TYPE               : 10  WIN32_OWN_PROCESS
                    STATE              : 4  RUNNING
                                            (STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)
                    WIN32_EXIT_CODE    : 0  (0x0)
                    SERVICE_EXIT_CODE  : 0  (0x0)
                    CHECKPOINT         : 0x0
                    WAIT_HINT          : 0x0
                    PID                : 4711
                    FLAGS              :
            """;
        var stopped = running.Replace("4711", "0", StringComparison.Ordinal);
        var parse = "[GeoDrive.Commands.WindowsServiceControl]::ParseProcessId($text)";

        Assert.Equal(4711, (int)Session.Invoke(parse, new Dictionary<string, object?> { ["text"] = running }).Single().BaseObject);
        Assert.Equal("True", Session.Invoke("$null -eq " + parse, new Dictionary<string, object?> { ["text"] = stopped }).Single().ToString());
        Assert.Equal("True", Session.Invoke("$null -eq " + parse, new Dictionary<string, object?> { ["text"] = "[SC] OpenService FAILED 1060:" }).Single().ToString());
    }

    [Fact]
    public void The_service_name_is_the_one_docs_windows_md_installs() =>
        Assert.Equal("GeoDrive", Session.Invoke("[GeoDrive.Commands.WindowsServiceControl]::ServiceName").Single().ToString());
}
