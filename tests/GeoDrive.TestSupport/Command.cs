using System.Diagnostics;

namespace GeoDrive.TestSupport;

/// <summary>A system tool run as the test itself (stat, getfattr, setfacl, chown …), for what a user would see or do.</summary>
public static class Command
{
    /// <summary>The tool's standard output; a tool that fails fails the test with its own words.</summary>
    public static string Output(string file, params string[] arguments)
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
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{file} {string.Join(' ', arguments)} exited {process.ExitCode}: {error.Result}");
        }
        return output.Result;
    }
}
