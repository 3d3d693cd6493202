using System.Diagnostics;

namespace GeoDrive.TestSupport;

/// <summary>A system tool run as the test itself (stat, getfattr, setfacl, chown …), for what a user would see or do.</summary>
public static class Command
{
    /// <summary>The tool's standard output; a tool that fails fails the test with its own words.</summary>
    public static string Output(string file, params string[] arguments)
    {
        var (exitCode, output, error) = Run(file, arguments);
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"{file} {string.Join(' ', arguments)} exited {exitCode}: {error}");
        }
        return output;
    }

    /// <summary>Runs the tool to its end: its exit code, standard output and standard error.</summary>
    public static (int ExitCode, string Output, string Error) Run(string file, params string[] arguments)
    {
        var start = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        process.WaitForExit();
        return (process.ExitCode, output.Result, error.Result);
    }
}
