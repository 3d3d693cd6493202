using System.Management.Automation;
using GeoDrive.Api;

namespace GeoDrive.Commands;

/// <summary>
/// Stubs files now, whatever the policy's access-wait says: the local blocks are freed, size and times
/// kept. Only files whose current bytes are verified in the bucket are stubbed.
/// </summary>
[Cmdlet(VerbsLifecycle.Invoke, "ForceStub", DefaultParameterSetName = PathSet, SupportsShouldProcess = true, ConfirmImpact = ConfirmImpact.Medium)]
[OutputType(typeof(FileActionResult))]
public sealed class InvokeForceStubCommand : FileActionCmdlet
{
    #region Parameters

    /// <summary>Skip the extra confirmation asked for a wildcard pattern (not -WhatIf), and stub pinned files too.</summary>
    [Parameter]
    public SwitchParameter Force { get; set; }

    #endregion

    protected override string Action => "Stub";

    protected override Task<FileActionResult[]> SendAsync(GeoDriveClient client, string drive, FileActionRequest request, CancellationToken cancellationToken) =>
        client.StubAsync(drive, new FileActionRequest { Paths = request.Paths, Literal = request.Literal, Force = Force }, cancellationToken);

    // A pattern can stub a whole tree, and recalling it all back costs time and egress: ask as for High impact.
    protected override bool Confirm(string target, bool pattern) =>
        ShouldProcessAt(target, "Stub (free local data; recalled on next open)",
            pattern ? ConfirmImpact.High : ConfirmImpact.Medium, ConfirmImpact.Medium, Force);
}
