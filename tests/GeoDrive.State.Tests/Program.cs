namespace GeoDrive.State.Tests;

/// <summary>
/// Entry point when this test assembly runs as a child process ("dotnet exec GeoDrive.State.Tests.dll
/// index-helper ..."); the xunit runner never calls it. One assembly keeps the helper and the tests
/// that kill it in step, with no extra project to build.
/// </summary>
public static class Program
{
    public static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == IndexHelper.Verb)
        {
            return IndexHelper.Run(args[1..]);
        }

        Console.Error.WriteLine($"usage: GeoDrive.State.Tests {IndexHelper.Verb} put|rename|hold <index.db> [count]");
        return 2;
    }
}
