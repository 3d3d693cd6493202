using System.Management.Automation;

namespace GeoDrive.Module.Tests;

/// <summary>What every per-cmdlet test class shares: the session and the "service is down" check.</summary>
[Collection(ModuleCollection.Name)]
public abstract class CmdletTests(ModuleSession session)
{
    protected ModuleSession Session { get; } = session;

    /// <summary>$cred: a credential built the way scripts here must (no ConvertTo-SecureString in our host).</summary>
    protected const string Credential = "$cred = [pscredential]::new('AKIAEXAMPLE', [System.Net.NetworkCredential]::new('', 'not-a-secret').SecurePassword)\n";

    protected ErrorRecord AssertServiceNotRunning(string script, string className)
    {
        var error = Session.InvokeExpectingError(script);
        Assert.Equal($"ServiceNotRunning,GeoDrive.Commands.{className}", error.FullyQualifiedErrorId);
        Assert.Equal(ErrorCategory.ResourceUnavailable, error.CategoryInfo.Category);
        Assert.Contains("Start-GeoDriveService", error.Exception.Message, StringComparison.Ordinal);
        Assert.Contains(Session.DeadSocket, error.Exception.Message, StringComparison.Ordinal);
        return error;
    }

    protected void AssertNothingFailed(string script)
    {
        Session.Invoke(script);
        Assert.Empty(Session.LastErrors);
    }
}
