using System.Management.Automation;
using GeoDrive.Api;
using GeoDrive.Core.Model;

namespace GeoDrive.Commands;

/// <summary>
/// Reads drives' event logs (uploads, stubs, recalls, errors …), newest first, filtered by time,
/// kind and path. The service keeps the newest 100,000 events of each drive.
/// </summary>
[Cmdlet(VerbsCommon.Get, "CloudDriveEvent")]
[OutputType(typeof(DriveEventInfo))]
public sealed class GetCloudDriveEventCommand : GeoDriveCmdlet
{
    #region Parameters

    /// <summary>Drive names or patterns; binds from a DriveInfo's Name (Get-CloudDrive | Get-CloudDriveEvent). All drives by default.</summary>
    [Parameter(Position = 0, ValueFromPipelineByPropertyName = true)]
    [Alias("Name")]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    [ArgumentCompleter(typeof(DriveNameCompleter))]
    public string[] Drive { get; set; } = ["*"];

    /// <summary>Only events at or after this time (local time unless the value says otherwise).</summary>
    [Parameter]
    public DateTime After { get; set; }

    /// <summary>Only events before this time.</summary>
    [Parameter]
    public DateTime Before { get; set; }

    /// <summary>Only events of these kinds (Upload, Stub, Recall, Error …; Tab completes them).</summary>
    [Parameter]
    [ValidateNotNullOrEmpty]
    public DriveEventKind[] Kind { get; set; } = [];

    /// <summary>Only events about files matching these drive-relative patterns ('*', '?', '**').</summary>
    [Parameter]
    [SupportsWildcards]
    [ValidateNotNullOrEmpty]
    public string[] Path { get; set; } = [];

    /// <summary>At most this many events per drive, the newest.</summary>
    [Parameter]
    [ValidateRange(1, int.MaxValue)]
    public int Newest { get; set; }

    #endregion

    protected override void ProcessRecord()
    {
        var query = new DriveEventQuery
        {
            After = MyInvocation.BoundParameters.ContainsKey(nameof(After)) ? new DateTimeOffset(After) : null,
            Before = MyInvocation.BoundParameters.ContainsKey(nameof(Before)) ? new DateTimeOffset(Before) : null,
            Kinds = Kind.Select(k => k.ToString()).Distinct().ToArray(),
            Paths = Path,
            Newest = Newest,
        };
        foreach (var given in Drive)
        {
            Try(given, () =>
            {
                foreach (var drive in ExpandDriveNames([given]))
                {
                    WriteObject(Call((c, ct) => c.GetEventsAsync(drive, query, ct)), enumerateCollection: true);
                }
            });
        }
    }
}
