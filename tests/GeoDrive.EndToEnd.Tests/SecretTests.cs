using System.Collections;
using System.Management.Automation;
using System.Management.Automation.Runspaces;
using System.Text;
using GeoDrive.TestSupport;

namespace GeoDrive.EndToEnd.Tests;

/// <summary>
/// The secrets acceptance line of issue 5: a full scenario with a -Credential drive (and a second drive
/// with a wrong secret), then every file the service wrote, every event and every cmdlet output — all
/// streams, errors included — is searched for the secret keys. Only the protected store holds one.
/// </summary>
[Collection(EndToEndCollection.Name)]
public sealed class SecretTests(CephS3Fixture ceph) : IAsyncLifetime, IClassFixture<CephS3Fixture>
{
    private const string WrongSecret = "Wr0ng-Secret-Key-never-to-be-seen-0123456789";
    private readonly ServiceProcess _service = new();
    private readonly StringBuilder _seen = new();
    private Runspace _runspace = null!;

    public async Task InitializeAsync()
    {
        await _service.StartAsync();
        Environment.SetEnvironmentVariable("GEODRIVE_SOCKET", _service.SocketPath);
        _runspace = RunspaceFactory.CreateRunspace(InitialSessionState.CreateDefault2());
        _runspace.Open();
        Run($"Import-Module '{Path.Combine(RepoRoot.Path, "GeoDrive.psd1")}' -ErrorAction Stop");
        Run("$VerbosePreference = 'Continue'; $DebugPreference = 'Continue'; $InformationPreference = 'Continue'; $WarningPreference = 'Continue'");
    }

    public async Task DisposeAsync()
    {
        _runspace.Dispose();
        await _service.DisposeAsync();
    }

    /// <summary>Runs a script and records everything it produced, on every stream, as text.</summary>
    private List<PSObject> Run(string script, IDictionary<string, object?>? variables = null)
    {
        foreach (var (name, value) in variables ?? new Dictionary<string, object?>())
        {
            _runspace.SessionStateProxy.SetVariable(name, value);
        }
        using var ps = PowerShell.Create();
        ps.Runspace = _runspace;
        ps.AddScript(script);
        var output = new List<PSObject>();
        try
        {
            output.AddRange(ps.Invoke());
        }
        catch (RuntimeException ex)
        {
            Record(ex.ErrorRecord);
            Record(ex.ToString());
        }
        foreach (var item in output)
        {
            Record(item);
        }
        foreach (var record in ps.Streams.Error) { Record(record); }
        foreach (var record in ps.Streams.Verbose) { Record(record.Message); }
        foreach (var record in ps.Streams.Debug) { Record(record.Message); }
        foreach (var record in ps.Streams.Warning) { Record(record.Message); }
        foreach (var record in ps.Streams.Information) { Record(record.MessageData); }
        foreach (var record in ps.Streams.Progress) { Record($"{record.Activity} {record.StatusDescription} {record.CurrentOperation}"); }
        return output;
    }

    private void Record(object? value, int depth = 0)
    {
        switch (value)
        {
            case null:
                return;
            case ErrorRecord error:
                _seen.AppendLine(error.ToString()).AppendLine(error.Exception.ToString()).AppendLine(error.FullyQualifiedErrorId)
                    .AppendLine(error.ErrorDetails?.Message).AppendLine(error.ErrorDetails?.RecommendedAction).AppendLine(error.CategoryInfo.ToString());
                Record(error.TargetObject, depth + 1);
                return;
            case string text:
                _seen.AppendLine(text);
                return;
            case PSObject ps when depth < 3:
                _seen.AppendLine(ps.ToString());
                foreach (var property in ps.Properties)
                {
                    object? propertyValue;
                    try { propertyValue = property.Value; } catch (GetValueException) { continue; }
                    _seen.Append(property.Name).Append('=');
                    Record(propertyValue, depth + 1);
                }
                return;
            case IEnumerable list when depth < 3:
                foreach (var item in list) { Record(item, depth + 1); }
                return;
            default:
                if (depth < 3 && value.GetType().Namespace?.StartsWith("GeoDrive", StringComparison.Ordinal) == true)
                {
                    Record(PSObject.AsPSObject(value), depth);
                    return;
                }
                _seen.AppendLine(value.ToString());
                return;
        }
    }

    [Fact]
    public async Task A_full_scenario_leaves_the_secret_key_nowhere_but_in_the_protected_store()
    {
        using var d = new DriveScenario(ceph, DriveScenario.Policy(settle: "0s"));
        using var wrong = new DriveScenario(ceph, DriveScenario.Policy());
        var v = d.Variables();

        Run(DriveScenario.NewDriveScript + " -Verbose -Debug", v);
        await File.WriteAllTextAsync(d.Mounted("a.txt"), "alpha");
        await File.WriteAllTextAsync(d.Mounted("b.pdf"), "bravo");
        await DriveScenario.EventuallyAsync(
            () => Run("@(Get-CloudFile -Drive $name | Where-Object State -eq 'Cached').Count", v).Single().BaseObject is 2, "both Cached");
        Run("Invoke-ForceUpload -Drive $name -Path a.txt -PassThru -Verbose -Debug", v);
        Run("Get-CloudFile -Drive $name | Invoke-ForceStub -PassThru -Force -Verbose -Debug", v);
        Assert.Equal("alpha", await File.ReadAllTextAsync(d.Mounted("a.txt")));
        Run("Invoke-CloudRecall -Drive $name -Path '**' -Verbose -Debug", v);
        Run("Set-CloudFile -Drive $name -Path b.pdf -Pin -PassThru -Verbose; Invoke-ForceStub -Drive $name -Path b.pdf -Confirm:$false", v);
        Run("Suspend-CloudDrive -Name $name -PassThru -Verbose; Resume-CloudDrive -Name $name -PassThru -Verbose", v);
        Run("Get-CloudDrive -Verbose -Debug; Get-CloudDriveStatus; Get-GeoDriveService", v);
        Run("Get-CloudPolicy -Drive $name; Get-CloudPolicy -Drive $name -Effective; Get-CloudPolicyDecision -Drive $name -Path b.pdf", v);
        Run("Get-CloudFile -Drive $name -Path nothing.txt; Invoke-ForceStub -Drive nosuchdrive -Path x -Confirm:$false", v);
        // A second drive with a wrong secret: refused by the server (signature mismatch), with the secret in the request.
        Run(DriveScenario.NewDriveScript + " -Verbose -Debug", wrong.Variables(secret: WrongSecret));
        Assert.Contains("CredentialsRejected", _seen.ToString(), StringComparison.Ordinal);
        var events = Run("Get-CloudDriveEvent", v);
        Assert.Contains(events, e => (string)e.Properties["Kind"].Value == "Upload");
        Assert.Contains(events, e => (string)e.Properties["Kind"].Value == "Recall");
        Assert.Contains(events, e => (string)e.Properties["Kind"].Value == "Pin");
        // The search below does find a secret where there is one: in the protected store, before removal.
        var store = Path.Combine(_service.HomePath, "credentials", d.Name + ".json");
        Assert.True(Holds(await File.ReadAllBytesAsync(store), ceph.SecretKey), "the protected store holds the secret");
        Run("Remove-CloudDrive -Name $name -Force -Verbose", v);
        await _service.StopAsync();

        var secrets = new[] { ceph.SecretKey, WrongSecret };
        var outputs = _seen.ToString();
        Assert.Contains(d.Name, outputs, StringComparison.Ordinal);
        // Every stream was collected: verbose (ShouldProcess), errors with their ids, objects' properties.
        Assert.Contains("Create and mount cloud drive", outputs, StringComparison.Ordinal);
        Assert.Contains("DriveNotFound", outputs, StringComparison.Ordinal);
        Assert.Contains("FileNotFound", outputs, StringComparison.Ordinal);
        Assert.Contains("CredentialKind=", outputs, StringComparison.Ordinal);
        foreach (var secret in secrets)
        {
            Assert.DoesNotContain(secret, outputs, StringComparison.Ordinal);
        }

        // Every file the service wrote: its log, its home (drives.json, …), the drives' caches and
        // LiteDB indexes with their events. The removed drive's protected store is gone with it.
        var written = Directory.EnumerateFiles(_service.Root, "*", SearchOption.AllDirectories)
            .Concat(Directory.EnumerateFiles(d.CachePath, "*", new EnumerationOptions { RecurseSubdirectories = true, AttributesToSkip = 0 }))
            .ToList();
        Assert.Contains(written, f => f.EndsWith("index.db", StringComparison.Ordinal));
        Assert.Contains(_service.LogPath, written);
        foreach (var file in written)
        {
            var bytes = await File.ReadAllBytesAsync(file);
            foreach (var secret in secrets)
            {
                Assert.False(Holds(bytes, secret), $"{file} holds a secret key");
            }
        }
    }

    private static bool Holds(byte[] bytes, string secret) =>
        bytes.AsSpan().IndexOf(Encoding.UTF8.GetBytes(secret)) >= 0 || bytes.AsSpan().IndexOf(Encoding.Unicode.GetBytes(secret)) >= 0;
}
