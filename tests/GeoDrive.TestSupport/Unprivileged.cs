namespace GeoDrive.TestSupport;

/// <summary>A command run as the real unprivileged user <c>nobody</c> (setpriv: no capabilities, no supplementary groups).</summary>
public static class Unprivileged
{
    public static (int ExitCode, string Output) Run(params string[] command) =>
        RunAsService("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--", .. command]);

    /// <summary>A command run as the test itself (root), e.g. to hand a folder to nobody.</summary>
    public static (int ExitCode, string Output) RunAsService(string file, params string[] arguments)
    {
        var (exitCode, output, error) = Command.Run(file, arguments);
        return (exitCode, output + error);
    }
}
