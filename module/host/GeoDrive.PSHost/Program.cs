using System.Management.Automation;
using System.Management.Automation.Runspaces;
using System.Text;
using GeoDrive.PSHost;

// A small pwsh stand-in: runs one script (-File) or command text (-Command) in a runspace with the
// core cmdlets, output through Out-Default (so Format.ps1xml views render), errors on stderr with
// their FullyQualifiedErrorId. Exit code: 'exit n' -> n; terminating error -> 1; Ctrl+C -> 130;
// otherwise, as pwsh: -File -> 0 (or a native command's code if it ran last), -Command -> 1 if the last statement failed.

CommandLine commandLine;
try
{
    commandLine = CommandLine.Parse(args);
}
catch (ArgumentException ex)
{
    Console.Error.WriteLine(ex.Message);
    return 64;
}
if (commandLine.ShowHelp)
{
    Console.WriteLine(CommandLine.Usage);
    return 0;
}

string script;
if (commandLine.File is { } file)
{
    var path = Path.GetFullPath(file);
    if (!File.Exists(path))
    {
        Console.Error.WriteLine($"The argument '{file}' is not recognized as the name of a script file. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.");
        return 64;
    }
    script = ScriptText.InvokeFile(path, commandLine.FileArguments);
}
else
{
    script = ScriptText.RunCommand(commandLine.Command ?? "");
}

var host = new ConsoleHost();
var state = InitialSessionState.CreateDefault2();
if (OperatingSystem.IsWindows())
{
    state.ExecutionPolicy = Microsoft.PowerShell.ExecutionPolicy.Bypass;
}
using var runspace = RunspaceFactory.CreateRunspace(host, state);
runspace.Open();

using var ps = PowerShell.Create();
ps.Runspace = runspace;
ps.AddScript(script).AddCommand("Out-Default");
ps.Streams.Error.DataAdded += (_, e) => ErrorText.Write(ps.Streams.Error[e.Index]);

var stopped = false;
Console.CancelKeyPress += (_, e) =>
{
    // Ctrl+C stops the pipeline (cmdlets get StopProcessing) instead of killing the process mid-write.
    e.Cancel = true;
    stopped = true;
    ps.BeginStop(null, null);
};

try
{
    ps.Invoke();
    if (stopped || ps.InvocationStateInfo.State == PSInvocationState.Stopped)
    {
        throw new PipelineStoppedException();
    }
}
catch (PipelineStoppedException) when (stopped)
{
    Console.Error.WriteLine("Stopped (Ctrl+C).");
    return 130;
}
catch (RuntimeException ex)
{
    ErrorText.Write(ex.ErrorRecord);
    return host.ExitCode ?? 1;
}
catch (Exception ex) when (ex is not OutOfMemoryException)
{
    Console.Error.WriteLine(ex.ToString());
    return 1;
}
finally
{
    Console.Out.Flush();
}
return host.ExitCode ?? ScriptText.ExitCode(runspace);

/// <summary>How the host turns a -File invocation into script text and reads its exit code back.</summary>
internal static class ScriptText
{
    private const string ExitVariable = "__GeoDrivePSHostExit";

    /// <summary>
    /// "&amp; 'script.ps1' args" as pwsh -File would bind them: "-Name" tokens stay parameter names,
    /// every other argument is a single-quoted literal. 'exit n' inside the file sets $LASTEXITCODE,
    /// which the wrapper keeps apart from native commands' codes by resetting it first.
    /// </summary>
    public static string InvokeFile(string path, string[] arguments)
    {
        var text = new StringBuilder();
        text.Append("$global:LASTEXITCODE = 0; $global:").Append(ExitVariable).Append(" = $null; & ").Append(Quote(path));
        foreach (var argument in arguments)
        {
            text.Append(' ').Append(IsParameterName(argument) ? argument : Quote(argument));
        }
        // 'exit n' in the file ends it with $LASTEXITCODE = n (a native command's code also lands there).
        // An advanced script (param with [Parameter()]) stopped by an error does not throw here: it
        // only leaves $? false, and pwsh -File exits 1 for it, so this host does too.
        text.Append("; $global:").Append(ExitVariable).Append(" = if ($? -or $global:LASTEXITCODE) { $global:LASTEXITCODE } else { 1 }");
        return text.ToString();
    }

    /// <summary>As pwsh -Command: 0 when the last statement succeeded ($? true), else 1.</summary>
    public static string RunCommand(string text) =>
        $"{text}\n$global:{ExitVariable} = if ($?) {{ 0 }} else {{ 1 }}";

    public static int ExitCode(Runspace runspace) =>
        runspace.SessionStateProxy.GetVariable(ExitVariable) is int code ? code : 0;

    private static bool IsParameterName(string argument) =>
        argument.Length > 1 && argument[0] == '-' && (char.IsLetter(argument[1]) || argument[1] == '_')
        && argument.Skip(1).All(c => char.IsLetterOrDigit(c) || c is '_' or '-' or ':');

    private static string Quote(string value) => "'" + value.Replace("'", "''", StringComparison.Ordinal) + "'";
}

/// <summary>Errors as pwsh's NormalView shows them, always with the FullyQualifiedErrorId scripts match on.</summary>
internal static class ErrorText
{
    public static void Write(ErrorRecord record)
    {
        if (record.FullyQualifiedErrorId.StartsWith("NativeCommandError", StringComparison.Ordinal))
        {
            // A native program's stderr line: pass it through as the program wrote it.
            Console.Error.WriteLine(record.Exception.Message);
            return;
        }
        var text = new StringBuilder();
        var command = record.InvocationInfo?.MyCommand?.Name;
        var message = record.ErrorDetails?.Message is { Length: > 0 } details ? details : record.Exception.Message;
        text.Append(string.IsNullOrEmpty(command) ? "" : command + ": ").AppendLine(message);
        if (record.InvocationInfo?.PositionMessage is { Length: > 0 } position && string.IsNullOrEmpty(command))
        {
            text.AppendLine(position);
        }
        text.Append("    + CategoryInfo          : ").AppendLine(record.CategoryInfo.GetMessage());
        text.Append("    + FullyQualifiedErrorId : ").AppendLine(record.FullyQualifiedErrorId);
        Console.Error.Write(text.ToString());
    }
}
