using System.Globalization;
using System.Management.Automation.Host;

namespace GeoDrive.PSHost;

/// <summary>
/// The minimal PSHost: a name, cultures, and SetShouldExit (which 'exit n' calls at the top level).
/// Nested prompts are not supported: this host runs scripts, it has no interactive loop.
/// </summary>
internal sealed class ConsoleHost : System.Management.Automation.Host.PSHost
{
    private readonly ConsoleUserInterface _ui = new();

    public override string Name => "GeoDrive.PSHost";

    public override Version Version { get; } = typeof(ConsoleHost).Assembly.GetName().Version ?? new Version(0, 1);

    public override Guid InstanceId { get; } = Guid.NewGuid();

    public override PSHostUserInterface UI => _ui;

    public override CultureInfo CurrentCulture => CultureInfo.CurrentCulture;

    public override CultureInfo CurrentUICulture => CultureInfo.CurrentUICulture;

    /// <summary>Set by 'exit n' at the top level of -Command text.</summary>
    public int? ExitCode { get; private set; }

    public override void SetShouldExit(int exitCode) => ExitCode = exitCode;

    public override void EnterNestedPrompt() => throw new NotSupportedException("GeoDrive.PSHost has no interactive prompt.");

    public override void ExitNestedPrompt() => throw new NotSupportedException("GeoDrive.PSHost has no interactive prompt.");

    public override void NotifyBeginApplication()
    {
    }

    public override void NotifyEndApplication()
    {
    }
}
