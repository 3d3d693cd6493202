namespace GeoDrive.Policies.Tests;

/// <summary>Finds the repository's policies/ and tests/fixtures/ from the test's output folder.</summary>
internal static class RepoFiles
{
    public static string Root { get; } = FindRoot();

    public static string Policy(params string[] parts) => Path.Combine([Root, "policies", .. parts]);

    public static string Fixture(params string[] parts) => Path.Combine([Root, "tests", "fixtures", "policies", .. parts]);

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Directory.Build.props")) && Directory.Exists(Path.Combine(dir.FullName, "policies")))
            {
                return dir.FullName;
            }
        }
        throw new InvalidOperationException("The repository root (with Directory.Build.props and policies/) was not found above " + AppContext.BaseDirectory);
    }
}
