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

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
            // A mount still busy: leave it for the OS temp cleaner rather than hide the test's own failure.
        }
        catch (UnauthorizedAccessException)
        {
        }
    }
}
