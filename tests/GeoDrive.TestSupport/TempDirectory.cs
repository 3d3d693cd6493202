namespace GeoDrive.TestSupport;

/// <summary>A fresh folder under /tmp for one test, removed with everything in it on dispose.</summary>
public sealed class TempDirectory : IDisposable
{
    public TempDirectory(string? label = null)
    {
        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "geodrive-test", $"{label ?? "t"}-{Guid.NewGuid():N}"[..Math.Min(40, (label ?? "t").Length + 33)]);
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    public string Combine(params string[] parts) => System.IO.Path.Combine([Path, .. parts]);

    public string CreateSubdirectory(string name)
    {
        var p = Combine(name);
        Directory.CreateDirectory(p);
        return p;
    }

    private static readonly List<string> Leftovers = [];

    private static void RetryAtExit(string path)
    {
        lock (Leftovers)
        {
            if (Leftovers.Count == 0)
            {
                AppDomain.CurrentDomain.ProcessExit += (_, _) =>
                {
                    lock (Leftovers)
                    {
                        foreach (var leftover in Leftovers)
                        {
                            try
                            {
                                Directory.Delete(leftover, recursive: true);
                            }
                            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                            {
                                // Still mounted: scripts/test.sh reports and clears dead mounts.
                            }
                        }
                    }
                };
            }
            Leftovers.Add(path);
        }
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // A mount still busy (an end-to-end drive is disposed before the service that mounted it):
            // tried again when the test host exits, once every service and mount is gone.
            RetryAtExit(Path);
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
