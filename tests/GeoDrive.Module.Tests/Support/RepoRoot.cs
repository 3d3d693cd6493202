namespace GeoDrive.Module.Tests;

/// <summary>The repository root: the folder above the test binaries that holds GeoDrive.psd1.</summary>
internal static class RepoRoot
{
    public static string Path { get; } = Find();

    public static string Combine(params string[] parts) => System.IO.Path.Combine([Path, .. parts]);

    /// <summary>Debug or Release, as this test assembly was built: the host is looked for in the same configuration.</summary>
    public static string Configuration { get; } =
        AppContext.BaseDirectory.Contains($"{System.IO.Path.DirectorySeparatorChar}Release{System.IO.Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Release" : "Debug";

    private static string Find()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(dir.FullName, "GeoDrive.psd1")))
            {
                return dir.FullName;
            }
        }
        throw new DirectoryNotFoundException("GeoDrive.psd1 not found above " + AppContext.BaseDirectory);
    }
}
