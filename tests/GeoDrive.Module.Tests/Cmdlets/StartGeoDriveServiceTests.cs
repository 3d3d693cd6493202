using System.Management.Automation;

namespace GeoDrive.Module.Tests;

public sealed class StartGeoDriveServiceTests(ModuleSession session) : CmdletTests(session)
{
    [Fact]
    public void Its_parameter_contract_is_as_documented()
    {
        var cmdlet = Session.Command("Start-GeoDriveService");
        Contract.Parameters(cmdlet, "ServicePath", "StatePath", "SocketPath");
        Contract.Mandatory(cmdlet, "ServicePath", false);
        Contract.Mandatory(cmdlet, "StatePath", false);
        Contract.Mandatory(cmdlet, "SocketPath", false);
        Contract.ShouldProcess(cmdlet, ConfirmImpact.Low);
        Contract.Outputs(cmdlet, "GeoDrive.Api.ServiceInfo");
    }

    [Fact]
    public void A_service_binary_that_does_not_exist_is_refused_with_how_to_build_it()
    {
        var error = Session.InvokeExpectingError(
            $"Start-GeoDriveService -ServicePath '{Path.Combine(Session.Scratch, "no-such-service")}' -StatePath '{Path.Combine(Session.Scratch, "home")}'");

        Assert.Equal("ServiceBinaryNotFound,GeoDrive.Commands.StartGeoDriveServiceCommand", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.ObjectNotFound, error.CategoryInfo.Category);
        Assert.Contains("scripts/build.sh", error.Exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_service_that_exits_at_once_is_reported_with_its_log()
    {
        var fake = Executable("dying-service.sh", "#!/bin/sh\necho \"cannot start: $*\" >&2\nexit 3\n");
        var home = Path.Combine(Session.Scratch, "dying-home");

        var error = Session.InvokeExpectingError($"Start-GeoDriveService -ServicePath '{fake}' -StatePath '{home}'");

        Assert.Equal("ServiceStartFailed,GeoDrive.Commands.StartGeoDriveServiceCommand", error.FullyQualifiedErrorId);
        var log = Path.Combine(home, "service.log");
        Assert.Contains(log, error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains($"cannot start: --socket {Session.DeadSocket} --home {home}", File.ReadAllText(log), StringComparison.Ordinal);
    }

    [Fact]
    public void WhatIf_starts_nothing()
    {
        var fake = Executable("never-run.sh", "#!/bin/sh\ntouch \"$0.ran\"\n");

        AssertNothingFailed($"Start-GeoDriveService -ServicePath '{fake}' -StatePath '{Path.Combine(Session.Scratch, "whatif-home")}' -WhatIf");
        Assert.False(File.Exists(fake + ".ran"));
    }

    /// <summary>A stand-in service binary (a shell script): what matters here is how the cmdlet starts and watches it.</summary>
    private string Executable(string name, string text)
    {
        var path = Path.Combine(Session.Scratch, name);
        File.WriteAllText(path, text);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        return path;
    }
}
