namespace GeoDrive.Service.Drives;

public sealed partial class DriveRegistry
{
    /// <summary>A drive's definition (its policy files), whether or not it is running.</summary>
    public async Task<DriveDefinition> DefinitionAsync(string name, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            return Definition(name);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>The running drive's host, or null when it did not start.</summary>
    public DriveHost? RunningHost(string name) => _drives.TryGetValue(name, out var host) ? host : null;
}
