using GeoDrive.Core.Model;
using GeoDrive.Core.Ports;
using GeoDrive.Engine.Drives;
using GeoDrive.Mount.ProjFS.Projection;
using GeoDrive.Policies.Model;

namespace GeoDrive.Service.FrontEnds;

/// <summary>
/// The Service's recall gate for ProjFS: the caller's process rule from the drive's policy in force
/// (system callers under the engine's name for them), and a stub whose data ProjFS has written
/// recorded as Cached, as the engine's own recall would leave it.
/// </summary>
public sealed class IndexHydrationGate(DriveEngine engine, IFileIndex index) : IHydrationGate
{
    public ValueTask<OpenDecision> DecideRecallAsync(string path, Caller caller, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult(Decide(engine.TreatmentFor(caller).Recall));

    public static OpenDecision Decide(RecallAction action) => action switch
    {
        RecallAction.Stream => OpenDecision.Stream,
        RecallAction.Deny => OpenDecision.Deny,
        _ => OpenDecision.Local,
    };

    public void Hydrated(string path, Caller caller)
    {
        if (index.Get(path) is { State: FileState.Stubbed or FileState.Recalling } entry)
        {
            entry.State = FileState.Cached;
            index.Put(entry);
        }
    }
}
