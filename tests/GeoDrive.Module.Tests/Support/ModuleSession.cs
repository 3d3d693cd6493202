using System.Collections.ObjectModel;
using System.Management.Automation;
using System.Management.Automation.Runspaces;

namespace GeoDrive.Module.Tests;

[CollectionDefinition(Name)]
public sealed class ModuleCollection : ICollectionFixture<ModuleSession>
{
    public const string Name = "module";
}

/// <summary>
/// One real PowerShell runspace (System.Management.Automation, CreateDefault2) with ./GeoDrive.psd1
/// imported, pointed at a socket where nothing listens, as on a machine whose service is stopped.
/// Pester-style in spirit: the test classes are the Describe blocks, their methods the Its.
/// </summary>
public sealed class ModuleSession : IDisposable
{
    private readonly Runspace _runspace;

    public ModuleSession()
    {
        Scratch = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "geodrive-test", "module-" + Guid.NewGuid().ToString("N")[..12]);
        Directory.CreateDirectory(Scratch);
        DeadSocket = System.IO.Path.Combine(Scratch, "nobody-listens.sock");
        // GeoDriveClient reads GEODRIVE_SOCKET when a cmdlet creates it, so set it before anything runs.
        Environment.SetEnvironmentVariable("GEODRIVE_SOCKET", DeadSocket);

        var state = InitialSessionState.CreateDefault2();
        if (OperatingSystem.IsWindows())
        {
            state.ExecutionPolicy = Microsoft.PowerShell.ExecutionPolicy.Bypass;
        }
        _runspace = RunspaceFactory.CreateRunspace(state);
        _runspace.Open();
        Invoke($"Import-Module '{ManifestPath}' -ErrorAction Stop");
    }

    public static string ManifestPath => RepoRoot.Combine("GeoDrive.psd1");

    /// <summary>A folder for this session's files ($TestDrive's role).</summary>
    public string Scratch { get; }

    public string DeadSocket { get; }

    public IReadOnlyList<ErrorRecord> LastErrors { get; private set; } = [];

    public IReadOnlyList<VerboseRecord> LastVerbose { get; private set; } = [];

    public IReadOnlyList<WarningRecord> LastWarnings { get; private set; } = [];

    /// <summary>Runs a script; returns its output. Non-terminating errors are in <see cref="LastErrors"/>.</summary>
    public Collection<PSObject> Invoke(string script, IDictionary<string, object?>? variables = null)
    {
        using var ps = PowerShell.Create();
        ps.Runspace = _runspace;
        foreach (var (name, value) in variables ?? new Dictionary<string, object?>())
        {
            _runspace.SessionStateProxy.SetVariable(name, value);
        }
        ps.AddScript(script);
        try
        {
            return ps.Invoke();
        }
        finally
        {
            LastErrors = [.. ps.Streams.Error];
            LastVerbose = [.. ps.Streams.Verbose];
            LastWarnings = [.. ps.Streams.Warning];
        }
    }

    /// <summary>Runs a script that must fail; returns the first error, terminating or not.</summary>
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
        return LastErrors.Count > 0 ? LastErrors[0] : throw new Xunit.Sdk.XunitException("The script did not fail: " + script);
    }

    /// <summary>The cmdlet as PowerShell sees it (parameters, sets, output types).</summary>
    public CmdletInfo Command(string name) =>
        (CmdletInfo)Invoke($"Get-Command -Name '{name}' -Module GeoDrive -CommandType Cmdlet").Single().BaseObject;

    public void Dispose()
    {
        _runspace.Dispose();
        try
        {
            Directory.Delete(Scratch, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
