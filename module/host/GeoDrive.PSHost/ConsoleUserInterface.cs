using System.Collections.ObjectModel;
using System.Management.Automation;
using System.Management.Automation.Host;
using System.Security;

namespace GeoDrive.PSHost;

/// <summary>
/// Output to stdout, errors/warnings/verbose/debug to stderr, progress ignored (scripts here run
/// unattended and their stderr is often a log). Prompts read lines from stdin.
/// </summary>
internal sealed class ConsoleUserInterface : PSHostUserInterface
{
    private readonly ConsoleRawUserInterface _raw = new();

    public override PSHostRawUserInterface RawUI => _raw;

    /// <summary>ANSI styling ($PSStyle, table headers) only on a terminal; logs and captures get plain text.</summary>
    public override bool SupportsVirtualTerminal => !Console.IsOutputRedirected;

    public override void Write(string value) => Console.Out.Write(GetOutputString(value, SupportsVirtualTerminal));

    public override void Write(ConsoleColor foregroundColor, ConsoleColor backgroundColor, string value) => Write(value);

    public override void WriteLine(string value) => Console.Out.WriteLine(GetOutputString(value, SupportsVirtualTerminal));

    public override void WriteErrorLine(string value) => Console.Error.WriteLine(GetOutputString(value, !Console.IsErrorRedirected));

    public override void WriteWarningLine(string message) => Console.Error.WriteLine("WARNING: " + message);

    public override void WriteVerboseLine(string message) => Console.Error.WriteLine("VERBOSE: " + message);

    public override void WriteDebugLine(string message) => Console.Error.WriteLine("DEBUG: " + message);

    public override void WriteInformation(InformationRecord record)
    {
    }

    public override void WriteProgress(long sourceId, ProgressRecord record)
    {
    }

    public override string ReadLine() =>
        Console.In.ReadLine() ?? throw new PSInvalidOperationException("GeoDrive.PSHost: no more input on stdin to answer a prompt.");

    public override SecureString ReadLineAsSecureString()
    {
        var secure = new SecureString();
        if (Console.IsInputRedirected)
        {
            foreach (var c in ReadLine())
            {
                secure.AppendChar(c);
            }
        }
        else
        {
            for (var key = Console.ReadKey(intercept: true); key.Key != ConsoleKey.Enter; key = Console.ReadKey(intercept: true))
            {
                if (key.Key == ConsoleKey.Backspace)
                {
                    if (secure.Length > 0)
                    {
                        secure.RemoveAt(secure.Length - 1);
                    }
                }
                else
                {
                    secure.AppendChar(key.KeyChar);
                }
            }
            Console.Error.WriteLine();
        }
        secure.MakeReadOnly();
        return secure;
    }

    public override Dictionary<string, PSObject> Prompt(string caption, string message, Collection<FieldDescription> descriptions)
    {
        WriteCaption(caption, message);
        var answers = new Dictionary<string, PSObject>();
        foreach (var field in descriptions)
        {
            Console.Error.Write($"{field.Name}: ");
            object value = field.ParameterTypeFullName == typeof(SecureString).FullName ? ReadLineAsSecureString() : ReadLine();
            answers[field.Name] = PSObject.AsPSObject(value);
        }
        return answers;
    }

    public override int PromptForChoice(string caption, string message, Collection<ChoiceDescription> choices, int defaultChoice)
    {
        WriteCaption(caption, message);
        var labels = choices.Select(c => c.Label).ToList();
        var hint = string.Join(" ", labels.Select((l, i) => $"[{HotKey(l)}] {l.Replace("&", "", StringComparison.Ordinal)}"));
        while (true)
        {
            Console.Error.Write($"{hint} (default is \"{HotKey(labels[Math.Max(defaultChoice, 0)])}\"): ");
            var answer = ReadLine().Trim();
            if (answer.Length == 0 && defaultChoice >= 0)
            {
                return defaultChoice;
            }
            var index = labels.FindIndex(l =>
                string.Equals(HotKey(l), answer, StringComparison.OrdinalIgnoreCase)
                || string.Equals(l.Replace("&", "", StringComparison.Ordinal), answer, StringComparison.OrdinalIgnoreCase));
            if (index >= 0)
            {
                return index;
            }
        }
    }

    public override PSCredential PromptForCredential(string caption, string message, string userName, string targetName) =>
        PromptForCredential(caption, message, userName, targetName, PSCredentialTypes.Default, PSCredentialUIOptions.Default);

    public override PSCredential PromptForCredential(
        string caption, string message, string userName, string targetName, PSCredentialTypes allowedCredentialTypes, PSCredentialUIOptions options)
    {
        WriteCaption(caption, message);
        if (string.IsNullOrEmpty(userName))
        {
            Console.Error.Write("User: ");
            userName = ReadLine();
        }
        Console.Error.Write($"Password for {userName}: ");
        return new PSCredential(userName, ReadLineAsSecureString());
    }

    private static void WriteCaption(string caption, string message)
    {
        if (!string.IsNullOrEmpty(caption))
        {
            Console.Error.WriteLine(caption);
        }
        if (!string.IsNullOrEmpty(message))
        {
            Console.Error.WriteLine(message);
        }
    }

    private static string HotKey(string label)
    {
        var amp = label.IndexOf('&', StringComparison.Ordinal);
        return amp >= 0 && amp + 1 < label.Length ? label[amp + 1].ToString() : label[..1];
    }
}
