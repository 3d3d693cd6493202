namespace GeoDrive.EndToEnd.Tests;

internal static class RepoRoot
{
    public static string Path { get; } = Find();

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
