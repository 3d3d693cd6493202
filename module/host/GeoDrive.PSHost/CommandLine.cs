namespace GeoDrive.PSHost;

/// <summary>The subset of pwsh's command line that scripts here use: -File, -Command, and switches accepted for compatibility.</summary>
internal sealed class CommandLine
{
    /// <summary>Switches pwsh has that change nothing in this host (no profiles, no logo, no interactive loop).</summary>
    private static readonly string[] Ignored = ["-noprofile", "-nop", "-nologo", "-noninteractive", "-noni", "-nonint"];

    /// <summary>pwsh options that take a value which this host ignores.</summary>
    private static readonly string[] IgnoredWithValue = ["-executionpolicy", "-ex", "-ep", "-outputformat", "-of", "-inputformat", "-if"];

    public string? File { get; private init; }
    public string[] FileArguments { get; private init; } = [];
    public string? Command { get; private init; }
    public bool ShowHelp { get; private init; }

    public static CommandLine Parse(string[] args)
    {
        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            var lower = arg.ToLowerInvariant();
            if (Ignored.Contains(lower))
            {
                continue;
            }
            if (IgnoredWithValue.Contains(lower))
            {
                i++;
                continue;
            }
            if (lower is "-file" or "-f")
            {
                if (i + 1 >= args.Length)
                {
                    throw new ArgumentException("-File needs the path of a script.");
                }
                return new CommandLine { File = args[i + 1], FileArguments = args[(i + 2)..] };
            }
            if (lower is "-command" or "-c")
            {
                // As in pwsh: everything after -Command is the command text; "-" reads it from stdin.
                var text = string.Join(' ', args[(i + 1)..]);
                return new CommandLine { Command = text == "-" ? Console.In.ReadToEnd() : text };
            }
            if (lower is "-help" or "-h" or "-?" or "/?")
            {
                return new CommandLine { ShowHelp = true };
            }
            if (arg.StartsWith('-'))
            {
                throw new ArgumentException($"Unknown option '{arg}'. Use -File <script.ps1> [args] or -Command <text>.");
            }
            // pwsh treats a first bare argument as the script file.
            return new CommandLine { File = arg, FileArguments = args[(i + 1)..] };
        }
        return new CommandLine { ShowHelp = true };
    }

    public const string Usage = """
        GeoDrive.PSHost - a small PowerShell host on System.Management.Automation (for machines without pwsh)

          GeoDrive.PSHost [-NoProfile] -File <script.ps1> [script arguments]
          GeoDrive.PSHost [-NoProfile] -Command <text>       ('-' reads the text from stdin)

        Has the PowerShell language and the Microsoft.PowerShell.Core cmdlets only (no Get-Content,
        Write-Host, Select-Object ...): use .NET calls such as [IO.File]::ReadAllText and [Console]::WriteLine.
        Exit code: the script's 'exit n'; 1 after a terminating error; otherwise 0.
        """;
}
