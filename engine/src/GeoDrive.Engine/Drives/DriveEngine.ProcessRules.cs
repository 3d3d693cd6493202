using GeoDrive.Core.Errors;
using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Policies.Evaluation;
using GeoDrive.Policies.Model;
using Microsoft.Extensions.Logging;

namespace GeoDrive.Engine.Drives;

/// <summary>
/// processExcludes (docs/policies.md): how the process behind a request is treated — whether its
/// listings, opens and lookups ask the bucket, and whether opening a stub recalls it, streams it
/// from the bucket leaving the stub, or is refused.
/// </summary>
public sealed partial class DriveEngine
{
    /// <summary>The process name that policies use for network and system callers (<see cref="Caller.IsSystem"/>).</summary>
    public const string SystemProcessName = "<SYSTEM>";

    /// <summary>
    /// The process rule in force for a caller: "&lt;SYSTEM&gt;" for network and system callers, else its image name. A policy
    /// without processExcludes treats every caller alike, and the caller's image name is not read.
    /// </summary>
    public ProcessTreatment TreatmentFor(Caller caller)
    {
        ArgumentNullException.ThrowIfNull(caller);
        var policy = _policy;
        return policy.Policy.ProcessExcludes.Count == 0
            ? ProcessTreatment.Default
            : policy.ProcessTreatmentFor(caller.IsSystem ? SystemProcessName : caller.ImageName);
    }

    /// <summary>
    /// Opening a Cached or Stubbed file (not for truncation), with the path's lock held: fileSync
    /// first, then for a stub the caller's recall rule. Returns the entry as it is now, and the
    /// decision when the open is answered without recalling (stream or deny).
    /// </summary>
    private async Task<(FileEntry Entry, OpenDecision? Decision)> OpenUnderProcessRuleAsync(
        FileEntry entry, Caller caller, OpenIntent intent, bool openElsewhere, bool streaming, CancellationToken cancellationToken)
    {
        var treatment = TreatmentFor(caller);
        // A stub that will be refused anyway is not worth asking the bucket about.
        var denied = entry.State == FileState.Stubbed && treatment.Recall == RecallAction.Deny;
        if (treatment.FileSync == SyncAction.Sync && !denied)
        {
            if (treatment.Recall == RecallAction.Hydrate && !(streaming && intent == OpenIntent.Read && entry.Size > MultipartThreshold) && _sync.RecallCanCheck(entry))
            {
                // One request where two were (issue 13): the recall's GET asks for the stub's own version (If-Match), so its
                // answer is what a HEAD would have found. Another version there, or none, refuses it, and the HEAD below finds
                // what happened and follows it, as before.
                try
                {
                    var (recalled, answer) = await RecallAnsweredLockedAsync(entry, asCheck: true, cancellationToken);
                    _sync.CheckedByRecallLocked(recalled, answer);
                    return (recalled, null);
                }
                catch (GeoDriveException ex) when (ex.ErrorId is ErrorIds.ObjectMismatch or ErrorIds.ObjectNotFound)
                {
                    entry = _index.Get(entry.Path) ?? throw NotFound(entry.Path);
                }
            }
            entry = await _sync.SyncFileLockedAsync(entry, openElsewhere, cancellationToken);
        }
        if (entry.State != FileState.Stubbed || treatment.Recall == RecallAction.Hydrate)
        {
            if (IsRenamedStub(entry))
            {
                // Its copy still owed, its bytes under the old key: recalled whole from there, following another site's change
                // or delete of that key first.
                return (await RecallRenamedStubLockedAsync(entry, cancellationToken) ?? throw BucketSync.DeletedInBucket(entry.Path), null);
            }
            if (streaming && intent == OpenIntent.Read && entry.State == FileState.Stubbed && entry.Size > MultipartThreshold)
            {
                // Streaming recall: the open returns once the recall has started; each read waits for its range.
                StartRecallLocked(entry, CancellationToken.None);
                return (entry, OpenDecision.Recalling);
            }
            try
            {
                return (await RecallLockedAsync(entry, cancellationToken), null);
            }
            catch (GeoDriveException ex) when (ex.ErrorId == ErrorIds.ObjectMismatch && treatment.FileSync == SyncAction.Sync)
            {
                // Replaced in the bucket since it was last asked (an upload or a stub within updateWait
                // counts as asking): ask now, let the stub stand for what the bucket holds, and recall that.
                _sync.CheckAgain(entry.Path);
                entry = await _sync.SyncFileLockedAsync(_index.Get(entry.Path) ?? throw NotFound(entry.Path), openElsewhere, cancellationToken);
                return (await RecallLockedAsync(entry, cancellationToken), null);
            }
        }
        if (treatment.Recall == RecallAction.Stream)
        {
            // Reads come from the bucket (ReadStreamedAsync); the front end refuses writes to a streamed file.
            _logger.LogDebug("{Drive}: '{Path}' streamed from the bucket for {Process} ({Intent})", Name, entry.Path, caller.ImageName, intent);
            return (entry, OpenDecision.Stream);
        }
        _logger.LogInformation("{Drive}: recall of '{Path}' denied to {Process} (pid {Pid}) by processExcludes", Name, entry.Path, caller.ImageName, caller.ProcessId);
        return (entry, OpenDecision.Deny);
    }
}
