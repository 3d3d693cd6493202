using System.Collections.ObjectModel;
using System.Management.Automation;
using System.Management.Automation.Runspaces;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// A real PowerShell runspace (System.Management.Automation) with ./GeoDrive.psd1 imported, talking
/// to one service's socket — what an administrator's session does, minus the console.
/// </summary>
public sealed class PowerShellSession : IDisposable
{
    private readonly Runspace _runspace;

    public PowerShellSession(string socketPath)
    {
        // The module's client reads the socket from the environment, as an administrator would set it.
        Environment.SetEnvironmentVariable("GEODRIVE_SOCKET", socketPath);
        var iss = InitialSessionState.CreateDefault2();
        if (OperatingSystem.IsWindows())
        {
            iss.ExecutionPolicy = Microsoft.PowerShell.ExecutionPolicy.Bypass;
        }
        _runspace = RunspaceFactory.CreateRunspace(iss);
        _runspace.Open();
        Invoke($"Import-Module '{Path.Combine(RepoRoot.Path, "GeoDrive.psd1")}' -ErrorAction Stop");
    }

    /// <summary>Runs a script; returns its output. Non-terminating errors are in <see cref="LastErrors"/>.</summary>
    public Collection<PSObject> Invoke(string script, IDictionary<string, object?>? variables = null)
    {
        using var ps = PowerShell.Create();
        ps.Runspace = _runspace;
        if (variables is not null)
        {
            foreach (var (name, value) in variables)
            {
                _runspace.SessionStateProxy.SetVariable(name, value);
            }
        }
        ps.AddScript(script);
        try
        {
            return ps.Invoke();
        }
        finally
        {
            LastErrors = ps.Streams.Error.ToList();
            LastWarnings = ps.Streams.Warning.ToList();
            LastProgress = ps.Streams.Progress.ToList();
        }
    }

    public IReadOnlyList<ErrorRecord> LastErrors { get; private set; } = [];

    /// <summary>What the last script wrote with Write-Warning (New-CloudDrive about a bucket, say).</summary>
    public IReadOnlyList<WarningRecord> LastWarnings { get; private set; } = [];

    /// <summary>What the last script wrote with Write-Progress, in order.</summary>
    public IReadOnlyList<ProgressRecord> LastProgress { get; private set; } = [];

    /// <summary>Runs a script that must fail; returns the error record (terminating or not).</summary>
    public ErrorRecord InvokeExpectingError(string script, IDictionary<string, object?>? variables = null)
    {
        try
        {
            Invoke(script, variables);
        }
        catch (RuntimeException ex)
        {
            return ex.ErrorRecord;
        }
        return LastErrors.Count > 0 ? LastErrors[0] : throw new Xunit.Sdk.XunitException("the script did not fail: " + script);
    }

    public void Dispose() => _runspace.Dispose();
}
