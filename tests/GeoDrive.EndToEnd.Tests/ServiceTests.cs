namespace GeoDrive.EndToEnd.Tests;

/// <summary>A test class with its own service process and an administrator's PowerShell session on it.</summary>
public abstract class ServiceTests : IAsyncLifetime
{
    protected ServiceProcess Service { get; } = new();

    protected PowerShellSession Ps { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        await Service.StartAsync();
        Ps = new PowerShellSession(Service.SocketPath);
    }

    public async Task DisposeAsync()
    {
        Ps.Dispose();
        await Service.DisposeAsync();
    }

    /// <summary>Stops the service cleanly and starts it again, with a new session; <paramref name="whileStopped"/> runs in between.</summary>
    protected async Task RestartServiceAsync(Action? whileStopped = null)
    {
        Ps.Dispose();
        await Service.StopAsync();
        whileStopped?.Invoke();
        await Service.StartAsync();
        Ps = new PowerShellSession(Service.SocketPath);
    }

    protected string StateOf(DriveScenario d, string path) =>
        Ps.Invoke("(Get-CloudFile -Drive $name -Path $p).State", new Dictionary<string, object?> { ["name"] = d.Name, ["p"] = path })
            .Single().ToString();

    /// <summary>
    /// The messages of the drive's Policy events, oldest first. Asserted instead of the service's console log,
    /// whose lines reach the test after the cmdlet that caused them has returned.
    /// </summary>
    protected string[] PolicyEvents(DriveScenario d) =>
        Ps.Invoke("Get-CloudDriveEvent -Drive $name -Kind Policy", new Dictionary<string, object?> { ["name"] = d.Name })
            .Select(e => e.Properties["Message"].Value.ToString()!).Reverse().ToArray();
}
